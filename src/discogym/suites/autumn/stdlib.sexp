; discogym's Autumn standard library, loaded before every program (a program's own definitions win).
; Written for discogym; the names and meanings follow the Autumn standard library.
(program
  (= GRID_SIZE 16)
  (= FRAME_RATE 8)
  (= background "black")

  ; Numbers and positions
  (= abs (--> n (if (< n 0) then (- n) else n)))
  (= sign (--> n (if (> n 0) then 1 else (if (< n 0) then -1 else 0))))
  (= addPositions (--> (a b) (Position (+ (.. a x) (.. b x)) (+ (.. a y) (.. b y)))))
  (= displacement (--> (a b) (Position (- (.. b x) (.. a x)) (- (.. b y) (.. a y)))))
  (= unitVector (--> (a b) (let (= d (displacement a b)) (Position (sign (.. d x)) (sign (.. d y))))))
  (= manhattan (--> (a b) (+ (abs (- (.. a x) (.. b x))) (abs (- (.. a y) (.. b y))))))
  (= adjacent (--> (a b) (== (manhattan a b) 1)))
  (= adjacentObjs (--> (obj objs) (filter (--> o (adjacent (.. obj origin) (.. o origin))) objs)))
  (= randomPosition (--> () (head (randomPositions GRID_SIZE 1))))

  ; Cells of an object on the grid, and free space
  (= cellPositions (--> obj (map (--> c (.. c position)) (render obj))))
  (= isFree (--> pos (& (isWithinBounds pos) (isFreePos pos))))
  (= isFreeExcept (--> (pos obj) (| (isFree pos) (any (--> p (== p pos)) (cellPositions obj)))))
  (= canMove (--> (obj dir)
    (! (any (--> p (! (isFreeExcept (addPositions p dir) obj))) (cellPositions obj)))))

  ; Moving: plain, without collision, wrapping around the grid
  (= move (--> (obj dir) (updateObj obj "origin" (addPositions (.. obj origin) dir))))
  (= moveLeft (--> obj (move obj (Position -1 0))))
  (= moveRight (--> obj (move obj (Position 1 0))))
  (= moveUp (--> obj (move obj (Position 0 -1))))
  (= moveDown (--> obj (move obj (Position 0 1))))
  (= moveNoCollision (--> (obj dir) (if (canMove obj dir) then (move obj dir) else obj)))
  (= moveLeftNoCollision (--> obj (moveNoCollision obj (Position -1 0))))
  (= moveRightNoCollision (--> obj (moveNoCollision obj (Position 1 0))))
  (= moveUpNoCollision (--> obj (moveNoCollision obj (Position 0 -1))))
  (= moveDownNoCollision (--> obj (moveNoCollision obj (Position 0 1))))
  (= wrap (--> n (% (+ (% n GRID_SIZE) GRID_SIZE) GRID_SIZE)))
  (= moveWrap (--> (obj dir)
    (let (= p (addPositions (.. obj origin) dir)) (updateObj obj "origin" (Position (wrap (.. p x)) (wrap (.. p y)))))))

  ; Falling and flowing
  (= nextSolid (--> obj (moveDownNoCollision obj)))
  (= nextLiquid (--> obj
    (if (canMove obj (Position 0 1)) then (moveDown obj)
     else (if (canMove obj (Position -1 0)) then (moveLeft obj)
     else (if (canMove obj (Position 1 0)) then (moveRight obj) else obj)))))

  ; The object of a list nearest to an object (the first of equals)
  (= closest (--> (obj objs)
    (foldl (--> (best o)
             (if (< (manhattan (.. obj origin) (.. o origin)) (manhattan (.. obj origin) (.. best origin)))
              then o else best))
           (head objs) objs)))
)
