; Switches: four switches in a row, on (yellow) or off (gray). A click on the leftmost switch always flips it;
; a click on any other switch flips it only when the switch just left of it is on and every switch farther
; left is off; otherwise nothing flips and the lamp shows orange for a step. The lamp is green when all four
; are on, red otherwise. Left turns every switch off.
(program
  (= GRID_SIZE 8)
  (object Switch (: on Bool) (: idx Int) (list (Cell 0 0 (if on then "yellow" else "gray")) (Cell 0 1 (if on then "yellow" else "gray"))))
  (object Lamp (: shade String) (list (Cell 0 0 shade) (Cell 1 0 shade)))
  (= off (--> () (map (--> i (Switch false i (Position (+ 1 (* 2 i)) 4))) (range 0 4))))
  (= switches (initnext ((off)) (prev switches)))
  (= isOn (--> (ss i) (.. (at ss i) on)))
  (= free (--> (ss i) (| (== i 0)
    (& (isOn ss (- i 1)) (! (any (--> j (isOn ss j)) (range 0 (- i 1))))))))
  (= hit (--> () (filter (--> s (| (== (.. s origin) click) (== (addPositions (.. s origin) (Position 0 1)) click))) switches)))
  (= refused (initnext false false))
  (= lamp (initnext (Lamp "red" (Position 3 1))
    (updateObj (prev lamp) "shade" (if refused then "orange" else (if (all4 switches) then "green" else "red")))))
  (= all4 (--> ss (! (any (--> s (! (.. s on))) ss))))
  (on (clicked switches) (let (= i (.. (head ((hit))) idx))
    (if (free switches i) then (= switches (map (--> s (if (== (.. s idx) i) then (updateObj s "on" (! (.. s on))) else s)) switches))
     else (= refused true))))
  (on left (= switches ((off))))
)
