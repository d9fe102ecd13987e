; Sorter: eight bars of heights one to eight stand in a row, each height its own colour. A click on a bar swaps
; it with the bar to its right (a click on the last bar swaps it with the first). The lamp in the corner is
; green while the bars rise from left to right, red otherwise. Down deals the starting order again, up the
; reverse of the sorted order.
(program
  (= GRID_SIZE 10)
  (object Bar (: h Int) (map (--> i (Cell 0 (- 0 i) (at (list "red" "orange" "yellow" "lime" "green" "cyan" "blue" "purple") (- h 1))))
                             (range 0 h)))
  (object Lamp (: ok Bool) (Cell 0 0 (if ok then "green" else "red")))
  (= deal (--> hs (map (--> i (Bar (at hs i) (Position (+ i 1) 9))) (range 0 8))))
  (= start (list 3 7 1 8 5 2 6 4))
  (= bars (initnext (deal start) (prev bars)))
  (= heights (--> bs (map (--> b (.. b h)) bs)))
  (= sorted (--> bs (! (any (--> i (> (.. (at bs i) h) (.. (at bs (+ i 1)) h))) (range 0 7)))))
  (= lamp (initnext (Lamp false (Position 0 0)) (updateObj (prev lamp) "ok" (sorted bars))))
  (= swap (--> (hs i) (let (= j (% (+ i 1) 8))
    (map (--> k (if (== k i) then (at hs j) else (if (== k j) then (at hs i) else (at hs k)))) (range 0 8)))))
  (on (clicked bars) (= bars (deal (swap (heights bars) (- (.. click x) 1)))))
  (on down (= bars (deal start)))
  (on up (= bars (deal (list 8 7 6 5 4 3 2 1))))
)
