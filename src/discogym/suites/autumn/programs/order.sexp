; Order: four buttons (red, blue, yellow, green) sit around the middle. They must be pressed in a secret order;
; each right press lights the next of the four pips in the middle row (white), a wrong press puts all the pips
; out (they flash red for a step). When all four pips are lit they turn lime, and the next press starts a new
; round whose secret order begins one button later (the same cycle, turned). Left puts the pips out and goes
; back to the first round.
(program
  (= GRID_SIZE 7)
  (object Button (: n Int) (Cell 0 0 (at (list "red" "blue" "yellow" "green") n)))
  (object Pips (: lit Int) (: wrong Bool)
    (map (--> i (Cell i 0 (if wrong then "red" else (if (>= i lit) then "dimgray" else (if (== lit 4) then "lime" else "white")))))
                               (range 0 4)))
  (= buttons (list (Button 0 (Position 3 0)) (Button 1 (Position 6 3)) (Button 2 (Position 0 3)) (Button 3 (Position 3 6))))
  (= cycle (list 2 0 3 1))
  (= round (initnext 0 (prev round)))
  (= pips (initnext (Pips 0 false (Position 1 3)) (updateObj (prev pips) "wrong" false)))
  (= wanted (--> () (at cycle (% (+ (.. pips lit) round) 4))))
  (= press (--> n (if (== (.. pips lit) 4) then (let (= round (% (+ round 1) 4)) (updateObj pips "lit" 0))
    else (if (== n ((wanted))) then (updateObj pips "lit" (+ (.. pips lit) 1)) else (updateObj (updateObj pips "lit" 0) "wrong" true)))))
  (on (clicked buttons) (= pips (press (.. (head (filter (--> b (== (.. b origin) click)) buttons)) n))))
  (on left (let (= round 0) (= pips (updateObj pips "lit" 0))))
)
