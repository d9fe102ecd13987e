; Gravity: a click drops a block at the top of the clicked column; blocks fall until they rest on the floor
; or on each other. Up clears everything.
(program
  (= GRID_SIZE 16)
  (object Block (: color String) (Cell 0 0 color))
  (object Floor (map (--> x (Cell x 0 "gray")) (range 0 16)))
  (= floor (Floor (Position 0 15)))
  (= blocks (initnext (list) (map nextSolid (prev blocks))))
  (= dropped (initnext 0 (prev dropped)))
  (on (& clicked (isFreePos (Position (.. click x) 0)))
    (let (= dropped (+ dropped 1))
         (= blocks (addObj blocks (Block (if (== (% dropped 2) 0) then "red" else "yellow") (Position (.. click x) 0))))))
  (on up (= blocks (list)))
)
