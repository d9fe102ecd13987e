; Water: a tap at the top pours water while it is open (click the tap); water falls, then spreads
; sideways over the basin's walls. Down drains the basin.
(program
  (= GRID_SIZE 16)
  (object Water (Cell 0 0 "blue"))
  (object Wall (Cell 0 0 "gray"))
  (object Tap (: open Bool) (Cell 0 0 (if open then "green" else "red")))
  (= tap (initnext (Tap false (Position 7 0)) (prev tap)))
  (= walls (concat (list (map (--> x (Wall (Position x 15))) (range 2 14))
                         (map (--> y (Wall (Position 2 y))) (range 8 15))
                         (map (--> y (Wall (Position 13 y))) (range 8 15)))))
  (= water (initnext (list)
    (let (= moved (map nextLiquid (prev water)))
         (if (& (.. tap open) (isFreePos (Position 7 1))) then (addObj moved (Water (Position 7 1))) else moved))))
  (on (clicked tap) (= tap (updateObj tap "open" (! (.. tap open)))))
  (on down (= water (list)))
)
