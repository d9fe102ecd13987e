; discogym's Autumn standard library, loaded before every program (a program's own definitions win).
; Written for discogym. The names, signatures and meanings follow the official standard library (Autumn.cpp's
; autumnstdlib); docs/autumn-compat.md lists where discogym adds or keeps more. A few functions are native
; (builtins.py): isFree, isFreeExcept, moveNoCollision, unitVector, adjacentObjs and rotate accept discogym's older
; forms beside the official ones, and nextLiquid is chosen by the interpreter's `stdlib` option.
(program
  (= GRID_SIZE 16)
  (= FRAME_RATE 8)
  (= background "black")

  ; Numbers
  (= abs (--> n (if (< n 0) then (- n) else n)))
  (= sign (--> n (if (> n 0) then 1 else (if (< n 0) then -1 else 0))))
  (= max (--> (a b) (if (< a b) then b else a)))
  (= min (--> (a b) (if (< a b) then a else b)))
  (= sum (--> (numbers) (foldl (--> (total n) (+ total n)) 0 numbers)))

  ; Positions
  (= movePos (--> (pos dir) (Position (+ (.. pos x) (.. dir x)) (+ (.. pos y) (.. dir y)))))
  (= moveLeftPos (--> pos (movePos pos (Position -1 0))))
  (= moveRightPos (--> pos (movePos pos (Position 1 0))))
  (= moveUpPos (--> pos (movePos pos (Position 0 -1))))
  (= moveDownPos (--> pos (movePos pos (Position 0 1))))
  (= addPositions movePos)
  (= deltaPos (--> (from to) (Position (- (.. to x) (.. from x)) (- (.. to y) (.. from y)))))
  (= displacement deltaPos)
  (= deltaElem (--> (a b) (deltaPos (.. a position) (.. b position))))
  (= deltaObj (--> (a b) (deltaPos (.. a origin) (.. b origin))))
  (= sqdist (--> (a b) (let (= d (deltaPos a b)) (+ (* (.. d x) (.. d x)) (* (.. d y) (.. d y))))))
  (= manhattan (--> (a b) (+ (abs (- (.. a x) (.. b x))) (abs (- (.. a y) (.. b y))))))
  (= adjacent (--> (a b) (== (manhattan a b) 1)))
  ; the positions with from.x <= x < to.x and from.y <= y < to.y, row by row
  (= rect (--> (from to)
    (concat (map (--> y (map (--> x (Position x y)) (range (.. from x) (.. to x)))) (range (.. from y) (.. to y))))))
  (= randomPosition (--> () (head (randomPositions GRID_SIZE 1))))
  ; the sign of each coordinate; a diagonal keeps only its x
  (= diagonalToX (--> (sx sy) (if (& (== (abs sx) 1) (== (abs sy) 1)) then (Position sx 0) else (Position sx sy))))
  (= unitVectorObjPos (--> (obj pos)
    (let (= d (deltaPos (.. obj origin) pos)) (diagonalToX (sign (.. d x)) (sign (.. d y))))))
  (= unitVectorSinglePos (--> (pos) (Position (sign (.. pos x)) (sign (.. pos y)))))

  ; Lists
  (= vcat concat)
  (= in (--> (item items) (any (--> other (== other item)) items)))

  ; Rendered cells: an object's (or a list's) cells on the grid, each with a position and a colour
  (= renderValue (--> value (if (isList value) then (concat (map renderValue value)) else ((.. value render)))))
  (= cellPositions (--> obj (map (--> c (.. c position)) (renderValue obj))))
  (= intersectsElems (--> (cells others)
    (any (--> c (any (--> o (== (.. c position) (.. o position))) others)) cells)))
  (= intersectsPosElems (--> (pos cells) (any (--> c (== (.. c position) pos)) cells)))
  (= intersectsPosPoss (--> (pos positions) (any (--> p (== p pos)) positions)))
  (= intersects (--> (a b) (intersectsElems (renderValue a) (renderValue b))))
  (= isFreePosExceptObj (--> (pos obj) (| (isFreePos pos) (intersectsPosElems pos (renderValue obj)))))
  (= isFreeRangeExceptObj (--> (start end obj)
    (let (= own (renderValue obj))
      (! (any (--> p (& (! (intersectsPosElems p own)) (! (isFreePos p))))
              (map (--> x (Position x 0)) (range start end)))))))

  ; Objects: adjacency (origins at most unitSize apart, Manhattan; or one step, diagonals included), clicks
  (= adjacentPoss (--> (a b unitSize) (let (= d (deltaPos a b)) (<= (+ (abs (.. d x)) (abs (.. d y))) unitSize))))
  (= adjacentTwoObjs (--> (a b unitSize) (adjacentPoss (.. a origin) (.. b origin) unitSize)))
  (= adjacentPossDiag (--> (a b) (let (= d (deltaPos a b)) (& (<= (abs (.. d x)) 1) (<= (abs (.. d y)) 1)))))
  (= adjacentTwoObjsDiag (--> (a b) (adjacentPossDiag (.. a origin) (.. b origin))))
  (= adjacentObjsDiag (--> obj
    (filter (--> other (any (--> o (adjacentTwoObjsDiag o other)) (if (isList obj) then obj else (list obj))))
            (allObjs))))
  (= adj (--> (obj objs unitSize) (any (--> other (adjacentTwoObjs obj other unitSize)) objs)))
  (= adjacentElem (--> (a b) (let (= d (deltaElem a b)) (== (+ (abs (.. d x)) (abs (.. d y))) 1))))
  (= objClicked (--> (objs) (filter (--> obj (clicked obj)) objs)))

  ; The nearest of a list (smallest squared distance; of equals, the later one); the object itself if empty
  (= closest (--> (obj objs)
    (if (== (length objs) 0) then obj
     else (foldl (--> (best o) (if (< (sqdist (.. best origin) (.. obj origin)) (sqdist (.. o origin) (.. obj origin)))
                                then best else o))
                 (head objs) objs))))
  (= closestPos (--> (obj positions)
    (if (== (length positions) 0) then (.. obj origin)
     else (foldl (--> (best p) (if (< (sqdist best (.. obj origin)) (sqdist p (.. obj origin))) then best else p))
                 (head positions) positions))))

  ; Moving: plain, and only onto free cells (the object's own cells count as free)
  (= move (--> (obj dir) (updateObj obj "origin" (movePos (.. obj origin) dir))))
  (= moveLeft (--> obj (move obj (Position -1 0))))
  (= moveRight (--> obj (move obj (Position 1 0))))
  (= moveUp (--> obj (move obj (Position 0 -1))))
  (= moveDown (--> obj (move obj (Position 0 1))))
  (= moveCanCollision (--> (obj x y other)
    (let (= moved (move obj (Position x y))) (if (isFreeExcept moved (list obj other)) then moved else obj))))
  (= rotateNoCollision (--> (obj)
    (let (= turned (rotate obj)) (if (& (isWithinBounds turned) (isFreeExcept turned obj)) then turned else obj))))
  (= moveInBounds (--> (obj dir)
    (let (= moved (move obj dir)) (if (& (isWithinBounds moved) (isFreeExcept moved obj)) then moved else obj))))
  (= moveLeftNoCollision (--> obj (moveInBounds obj (Position -1 0))))
  (= moveRightNoCollision (--> obj (moveInBounds obj (Position 1 0))))
  (= moveUpNoCollision (--> obj (moveInBounds obj (Position 0 -1))))
  (= moveDownNoCollision (--> obj (moveInBounds obj (Position 0 1))))
  (= canMove (--> (obj dir)
    (! (any (--> p (! (isFreeExcept (movePos p dir) obj))) (cellPositions obj)))))
  (= wrap (--> n (% (+ (% n GRID_SIZE) GRID_SIZE) GRID_SIZE)))
  (= moveWrap (--> (obj dir)
    (let (= p (movePos (.. obj origin) dir)) (updateObj obj "origin" (Position (wrap (.. p x)) (wrap (.. p y)))))))

  ; Falling and flowing. nextLiquid: the official algorithm (fall if the cell below is free, else move toward the
  ; nearest hole of the row below whose cell above is free too) or discogym's (down, else left, else right).
  (= nextSolid moveDownNoCollision)
  (= liquidTowardHole (--> (obj hole)
    (let (= above (moveUpPos hole))
         (= moved (move obj (unitVectorObjPos obj above)))
      (if (& (isFreePos above) (& (isFreePos (.. moved origin)) (isWithinBounds moved))) then moved else obj))))
  (= officialNextLiquid (--> (obj)
    (let (= y (.. (.. obj origin) y))
      (if (& (!= y (- GRID_SIZE 1)) (isFree (moveDown obj))) then (moveDown obj)
       else (let (= row (filter (--> p (!= (.. p y) GRID_SIZE)) (rect (Position 0 (+ y 1)) (Position GRID_SIZE (+ y 2)))))
                 (= holes (filter (--> p (& (isFreePos p) (isFreePos (moveUpPos p)))) row))
              (if (== (length holes) 0) then obj else (liquidTowardHole obj (closestPos obj holes))))))))
  (= discogymNextLiquid (--> obj
    (if (canMove obj (Position 0 1)) then (moveDown obj)
     else (if (canMove obj (Position -1 0)) then (moveLeft obj)
     else (if (canMove obj (Position 1 0)) then (moveRight obj) else obj)))))
)
