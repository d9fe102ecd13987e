; Wind: leaves appear at random; the arrows set the wind, which blows every leaf one cell a step; leaves
; blown off the grid are gone. The weather vane in the corner shows the wind.
(program
  (= GRID_SIZE 16)
  (object Leaf (Cell 0 0 "green"))
  (object Vane (: dir Int) (Cell 0 0 (at (list "white" "red" "blue" "yellow" "purple") dir)))
  (= winds (list (Position 0 0) (Position -1 0) (Position 1 0) (Position 0 -1) (Position 0 1)))
  (= wind (initnext 0 (prev wind)))
  (= vane (initnext (Vane 0 (Position 15 15)) (updateObj (prev vane) "dir" wind)))
  (= leaves (initnext (list)
    (let (= blown (filter (--> l (isWithinBounds (.. l origin)))
                          (map (--> l (move l (at winds wind))) (prev leaves))))
         (if (< (length blown) 12) then (addObj blown (Leaf (head (randomPositions 15 1)))) else blown))))
  (on left (= wind 1))
  (on right (= wind 2))
  (on up (= wind 3))
  (on down (= wind 4))
  (on clicked (= wind 0))
)
