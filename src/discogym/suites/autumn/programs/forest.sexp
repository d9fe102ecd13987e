; Forest: a click on a tree (green) sets it alight (red); fire spreads each step to the trees next to a burning
; one (left, right, above, below), and a burnt tree leaves ash (gray). Every step one cell, drawn at random, may
; grow: ash there becomes a tree again. A click on ash or bare ground plants a tree; down puts every fire out.
(program
  (= GRID_SIZE 12)
  (object Plot (: state Int) (if (== state 1) then (Cell 0 0 "green") else (if (== state 2) then (Cell 0 0 "red")
                              else (if (== state 3) then (Cell 0 0 "gray") else (list)))))
  (= N 12)
  (= bare (--> p (| (== (.. p y) 5) (== (.. p x) 8))))
  (= none (Position -1 -1))
  (= spark (initnext none none))
  (= plots (initnext (map (--> p (Plot (if (bare p) then 0 else 1) p)) (allPositions N)) (touch (burn (prev plots)) (prev plots))))
  (= stateAt (--> (ps x y) (if (& (& (>= x 0) (< x N)) (& (>= y 0) (< y N))) then (.. (at ps (+ (* x N) y)) state) else 0)))
  (= burning (--> (ps p) (let (= x (.. p x)) (= y (.. p y))
    (| (| (== (stateAt ps (- x 1) y) 2) (== (stateAt ps (+ x 1) y) 2))
       (| (== (stateAt ps x (- y 1)) 2) (== (stateAt ps x (+ y 1)) 2))))))
  (= burn (--> ps (let (= sprout ((randomPosition))) (= alight (any (--> c (== (.. c state) 2)) ps))
    (map (--> c (let (= s (.. c state))
      (if (== s 2) then (updateObj c "state" 3)
       else (if (& alight (& (== s 1) (burning ps (.. c origin)))) then (updateObj c "state" 2)
       else (if (& (== s 3) (== (.. c origin) sprout)) then (updateObj c "state" 1) else c)))))
      ps))))
  (= touch (--> (ps before) (let (= s (stateAt before (.. spark x) (.. spark y)))
    (if (== spark none) then ps
     else (map (--> c (if (== (.. c origin) spark) then (updateObj c "state" (if (== s 1) then 2 else (if (== s 2) then 2 else 1)))
                       else c)) ps)))))
  (on clicked (= spark click))
  (on down (= plots (map (--> c (if (== (.. c state) 2) then (updateObj c "state" 3) else c)) plots)))
)
