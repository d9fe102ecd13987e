; Ducks: the mother duck (orange) walks with the arrows. Walking into a sitting duckling (yellow) does not move
; her; the duckling joins her line instead, at the front, and turns white. When she moves, the line follows:
; each duckling steps into the cell the one ahead of it (or she) has just left. She cannot walk into her own
; line. A click makes the whole line sit down where it is; a duckling sitting in the pond (blue) swims (cyan).
(program
  (= GRID_SIZE 12)
  (object Pond (map (--> p (Cell (.. p x) (.. p y) "blue")) (allPositions 3)))
  (object Duckling (: following Bool) (Cell 0 0 (if following then "white"
    else (if (& (& (>= (.. origin x) 8) (<= (.. origin x) 10)) (& (>= (.. origin y) 1) (<= (.. origin y) 3))) then "cyan"
    else "yellow"))))
  (object Mother (Cell 0 0 "orange"))
  (= pond (initnext (Pond (Position 8 1)) (prev pond)))
  (= mother (initnext (Mother (Position 2 9)) (prev mother)))
  (= line (initnext (list) (prev line)))
  (= sitting (initnext (list (Duckling false (Position 5 9)) (Duckling false (Position 2 4)) (Duckling false (Position 9 8))
                             (Duckling false (Position 6 5)) (Duckling false (Position 4 2)))
    (prev sitting)))
  (= follow (--> (ducks lead) (if (== (length ducks) 0) then ducks
    else (map (--> i (updateObj (at ducks i) "origin" (if (== i 0) then lead else (.. (at ducks (- i 1)) origin))))
              (range 0 (length ducks))))))
  (= waddle (--> dir (let (= spot (addPositions (.. mother origin) dir))
    (if (| (! (isWithinBounds spot)) (any (--> d (== (.. d origin) spot)) line)) then mother
     else (if (any (--> d (== (.. d origin) spot)) sitting)
            then (let (= line (concat (list (map (--> d (updateObj d "following" true))
                                                 (filter (--> d (== (.. d origin) spot)) sitting))
                                            line)))
                      (= sitting (filter (--> d (!= (.. d origin) spot)) sitting))
                      mother)
            else (let (= line (follow line (.. mother origin))) (updateObj mother "origin" spot)))))))
  (on left (= mother (waddle (Position -1 0))))
  (on right (= mother (waddle (Position 1 0))))
  (on up (= mother (waddle (Position 0 -1))))
  (on down (= mother (waddle (Position 0 1))))
  (on clicked (let (= sitting (concat (list sitting (map (--> d (updateObj d "following" false)) line)))) (= line (list))))
)
