; discogym's Autumn standard library, loaded before every program (a program's own definitions win).
; Written for discogym. The names, signatures and meanings follow the official standard library (Autumn.cpp's
; autumnstdlib); docs/autumn-compat.md lists where discogym adds or keeps more. A few functions are native
; (builtins.py): isFree, isFreeExcept, moveNoCollision, unitVector, adjacentObjs and rotate accept discogym's older
; forms beside the official ones, and nextLiquid is chosen by the interpreter's `stdlib` option.
; Scope is dynamic, so a `let`'s assignment to a name a caller has bound changes the caller's variable: the
; functions below assign in a `let` only the names the official ones assign (delta, sign_x, holes, ...), and
; discogym's own helpers bind their temporaries as lambda parameters, which shadow instead.
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
  (= sqdist (--> (a b) (let (= delta (deltaPos a b)) (+ (* (.. delta x) (.. delta x)) (* (.. delta y) (.. delta y))))))
  (= manhattan (--> (a b) (+ (abs (- (.. a x) (.. b x))) (abs (- (.. a y) (.. b y))))))
  (= adjacent (--> (a b) (== (manhattan a b) 1)))
  ; the positions with from.x <= x < to.x and from.y <= y < to.y, row by row
  (= rect (--> (from to)
    (let (= xmin (.. from x)) (= xmax (.. to x)) (= ymin (.. from y)) (= ymax (.. to y))
         (= rectPos (concat (map (--> y (map (--> x (Position x y)) (range xmin xmax))) (range ymin ymax))))
      rectPos)))
  (= randomPosition (--> () (head (randomPositions GRID_SIZE 1))))
  ; the sign of each coordinate; a diagonal keeps only its x
  (= unitVectorObjPos (--> (obj pos)
    (let (= delta (deltaPos (.. obj origin) pos)) (= sign_x (sign (.. delta x))) (= sign_y (sign (.. delta y)))
      (if (& (== (abs sign_x) 1) (== (abs sign_y) 1)) then (Position sign_x 0) else (Position sign_x sign_y)))))
  (= unitVectorSinglePos (--> (pos)
    (let (= sign_x (sign (.. pos x))) (= sign_y (sign (.. pos y))) (Position sign_x sign_y))))

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
    (let (= allCheckedPos (map (--> x (Position x 0)) (range start end)))
         (= prev_elems (renderValue obj))
         (= filtered_pos (filter (--> p (! (intersectsPosElems p prev_elems))) allCheckedPos))
      (! (any (--> p (! (isFreePos p))) filtered_pos)))))

  ; Objects: adjacency (origins at most unitSize apart, Manhattan; or one step, diagonals included), clicks
  (= adjacentPoss (--> (a b unitSize)
    (let (= delta (deltaPos a b)) (<= (+ (abs (.. delta x)) (abs (.. delta y))) unitSize))))
  (= adjacentTwoObjs (--> (a b unitSize) (adjacentPoss (.. a origin) (.. b origin) unitSize)))
  (= adjacentPossDiag (--> (a b) (let (= delta (deltaPos a b)) (& (<= (abs (.. delta x)) 1) (<= (abs (.. delta y)) 1)))))
  (= adjacentTwoObjsDiag (--> (a b) (adjacentPossDiag (.. a origin) (.. b origin))))
  (= adjacentObjsDiag (--> obj
    (filter (--> other (any (--> o (adjacentTwoObjsDiag o other)) (if (isList obj) then obj else (list obj))))
            (allObjs))))
  (= adj (--> (obj objs unitSize) (any (--> other (adjacentTwoObjs obj other unitSize)) objs)))
  (= adjacentElem (--> (a b) (let (= delta (deltaElem a b)) (== (+ (abs (.. delta x)) (abs (.. delta y))) 1))))
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
    ((--> moved (if (isFreeExcept moved (list obj other)) then moved else obj)) (move obj (Position x y)))))
  (= rotateNoCollision (--> (obj)
    ((--> turned (if (& (isWithinBounds turned) (isFreeExcept turned obj)) then turned else obj)) (rotate obj))))
  (= moveInBounds (--> (obj dir)
    ((--> moved (if (& (isWithinBounds moved) (isFreeExcept moved obj)) then moved else obj)) (move obj dir))))
  (= moveLeftNoCollision (--> obj (moveInBounds obj (Position -1 0))))
  (= moveRightNoCollision (--> obj
    (let (= wbound (isWithinBounds (moveRight obj))) (= fr (isFreeExcept (moveRight obj) obj))
         (= ret (if (& wbound fr) then (moveRight obj) else obj))
      ret)))
  (= moveUpNoCollision (--> obj (moveInBounds obj (Position 0 -1))))
  (= moveDownNoCollision (--> obj (moveInBounds obj (Position 0 1))))
  (= canMove (--> (obj dir)
    (! (any (--> p (! (isFreeExcept (movePos p dir) obj))) (cellPositions obj)))))
  (= wrap (--> n (% (+ (% n GRID_SIZE) GRID_SIZE) GRID_SIZE)))
  (= moveWrap (--> (obj dir)
    ((--> p (updateObj obj "origin" (Position (wrap (.. p x)) (wrap (.. p y))))) (movePos (.. obj origin) dir))))

  ; Falling and flowing. nextLiquid: the official algorithm (fall if the cell below is free, else move toward the
  ; nearest hole of the row below whose cell above is free too) or discogym's (down, else left, else right).
  (= nextSolid moveDownNoCollision)
  (= nextLiquidMoveClosestHole (--> (obj closestHole)
    (let (= dir (unitVectorObjPos obj (moveUpPos closestHole)))
         (= movedObj (move obj dir))
      (if (& (isFreePos (moveUpPos closestHole)) (& (isFreePos (.. movedObj origin)) (isWithinBounds movedObj)))
       then movedObj else obj))))
  (= nextLiquidClosestHole (--> (obj holes)
    (if (== (length holes) 0) then obj
     else (let (= closestHole (closestPos obj holes)) (nextLiquidMoveClosestHole obj closestHole)))))
  (= officialNextLiquid (--> (obj)
    (if (& (!= (.. (.. obj origin) y) (- GRID_SIZE 1)) (isFree (moveDown obj))) then (moveDown obj)
     else (let (= nextRowPos (rect (Position 0 (+ (.. (.. obj origin) y) 1)) (Position GRID_SIZE (+ (.. (.. obj origin) y) 2))))
               (= nextRowPos (filter (--> p (!= (.. p y) GRID_SIZE)) nextRowPos))
               (= holes (filter (--> p (& (isFreePos p) (isFreePos (moveUpPos p)))) nextRowPos))
            (nextLiquidClosestHole obj holes)))))
  (= discogymNextLiquid (--> obj
    (if (canMove obj (Position 0 1)) then (moveDown obj)
     else (if (canMove obj (Position -1 0)) then (moveLeft obj)
     else (if (canMove obj (Position 1 0)) then (moveRight obj) else obj)))))
  (= nextLiquid discogymNextLiquid)  ; Interpreter(..., stdlib="official") rebinds it to officialNextLiquid
)
