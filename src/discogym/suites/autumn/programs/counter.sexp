; Counter: each click adds one to a hidden count; the bar shows the count modulo 8, the lamp turns on every
; time the count reaches a multiple of 8; left resets.
(program
  (= GRID_SIZE 8)
  (object Bar (: n Int) (map (--> i (Cell i 0 "cyan")) (range 0 n)))
  (object Lamp (: on Bool) (Cell 0 0 (if on then "yellow" else "gray")))
  (= count (initnext 0 (prev count)))
  (= bar (initnext (Bar 0 (Position 0 7)) (updateObj (prev bar) "n" (% count 8))))
  (= lamp (initnext (Lamp false (Position 7 0))
    (updateObj (prev lamp) "on" (& (> count 0) (== (% count 8) 0)))))
  (on clicked (= count (+ count 1)))
  (on left (= count 0))
)
