; Dominoes: a click on a standing domino (white) tips it over; a tipping domino (orange) knocks over the standing
; dominoes next to it (left, right, above or below) in the next step and then lies flat (gray), so a fall runs
; along a line. A click on an empty cell stands a new domino there (up to 60); up stands every domino up again.
(program
  (= GRID_SIZE 12)
  (object Domino (: state Int) (Cell 0 0 (if (== state 0) then "white" else (if (== state 1) then "orange" else "gray"))))
  (= line (concat (list (map (--> x (Position x 2)) (range 1 9)) (map (--> y (Position 8 y)) (range 3 7))
                        (map (--> x (Position x 6)) (range 3 8)) (map (--> y (Position 2 y)) (range 7 11))
                        (map (--> x (Position x 10)) (range 3 11)))))
  (= setUp (--> () (map (--> p (Domino 0 p)) line)))
  (= topple (--> ds (let (= tipping (filter (--> o (== (.. o state) 1)) ds))
    (map (--> d (if (== (.. d state) 1) then (updateObj d "state" 2)
                 else (if (& (== (.. d state) 0) (any (--> o (adjacent (.. o origin) (.. d origin))) tipping))
                       then (updateObj d "state" 1) else d)))
         ds))))
  (= none (Position -1 -1))
  (= tap (initnext none none))
  (= touch (--> (ds before) (if (== tap none) then ds
    else (if (any (--> d (& (== (.. d origin) tap) (== (.. d state) 0))) before)
           then (map (--> d (if (== (.. d origin) tap) then (updateObj d "state" 1) else d)) ds)
    else (if (& (! (any (--> d (== (.. d origin) tap)) before)) (< (length ds) 60)) then (addObj ds (Domino 0 tap))
    else ds)))))
  (= dominoes (initnext ((setUp)) (touch (topple (prev dominoes)) (prev dominoes))))
  (on clicked (= tap click))
  (on up (= dominoes (map (--> d (updateObj d "state" 0)) dominoes)))
)
