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
  (= dominoes (initnext ((setUp))
    (let (= tipping (filter (--> o (== (.. o state) 1)) (prev dominoes))) (map (--> d (if (== (.. d state) 1) then (updateObj d "state" 2)
                 else (if (& (== (.. d state) 0) (any (--> o (adjacent (.. o origin) (.. d origin))) tipping))
                       then (updateObj d "state" 1) else d)))
         (prev dominoes)))))
  (on (clicked dominoes) (= dominoes (map (--> d (if (& (== (.. d origin) click) (== (.. d state) 0))
                                                  then (updateObj d "state" 1) else d)) dominoes)))
  (on (& (& clicked (isFreePos click)) (< (length dominoes) 60)) (= dominoes (addObj dominoes (Domino 0 click))))
  (on up (= dominoes (map (--> d (updateObj d "state" 0)) dominoes)))
)
