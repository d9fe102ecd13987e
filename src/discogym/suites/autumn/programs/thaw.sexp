; Thaw: a click on the stove (four by two cells, bottom left) lights it (orange) or puts it out (maroon). The thermometer (red
; bar, right) rises one mark a step while the stove burns and sinks one mark a step while it is out (0 to 8).
; From six marks up the ice cubes (cyan) of the tray melt into water (blue), one a step, left to right; at
; two marks or fewer the water freezes again, one cube a step, right to left. Up spills the water away.
(program
  (= GRID_SIZE 10)
  (object Stove (: lit Bool) (map (--> p (Cell (.. p x) (.. p y) (if lit then "orange" else "maroon"))) (filter (--> p (< (.. p y) 2)) (allPositions 4))))
  (object Gauge (: level Int) (map (--> i (Cell 0 (- 0 i) "red")) (range 0 level)))
  (object Cube (: state Int) (if (== state 0) then (Cell 0 0 "cyan") else (if (== state 1) then (Cell 0 0 "blue") else (list))))
  (= stove (initnext (Stove false (Position 0 8)) (prev stove)))
  (= temp (initnext 0 (if (.. stove lit) then (if (< (prev temp) 8) then (+ (prev temp) 1) else 8)
                       else (if (> (prev temp) 0) then (- (prev temp) 1) else 0))))
  (= gauge (initnext (Gauge 0 (Position 9 9)) (updateObj (prev gauge) "level" temp)))
  (= firstWith (--> (cs s) (foldl (--> (found c) (if (& (== found -1) (== (.. c state) s)) then (.. (.. c origin) x) else found)) -1 cs)))
  (= lastWith (--> (cs s) (foldl (--> (found c) (if (== (.. c state) s) then (.. (.. c origin) x) else found)) -1 cs)))
  (= turn (--> (cs x s) (map (--> c (if (== (.. (.. c origin) x) x) then (updateObj c "state" s) else c)) cs)))
  (= cubes (initnext (map (--> x (Cube 0 (Position x 5))) (range 2 8))
    (if (>= temp 6) then (turn (prev cubes) (firstWith (prev cubes) 0) 1)
     else (if (<= temp 2) then (turn (prev cubes) (lastWith (prev cubes) 1) 0) else (prev cubes)))))
  (on (clicked stove) (= stove (updateObj stove "lit" (! (.. stove lit)))))
  (on up (= cubes (map (--> c (if (== (.. c state) 1) then (updateObj c "state" 2) else c)) cubes)))
)
