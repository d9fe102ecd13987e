; Combo: three dials in a row; a click on a dial turns it to the next colour (red, green, blue, yellow, then
; red again) and turns the dial to its right along with it (the rightmost turns alone). The lamp above is white
; when all three dials show the same colour, dark gray otherwise. Left sets the dials back to red, green, blue.
(program
  (= GRID_SIZE 5)
  (object Dial (: face Int) (: idx Int) (Cell 0 0 (at (list "red" "green" "blue" "yellow") face)))
  (object Lamp (: lit Bool) (Cell 0 0 (if lit then "white" else "darkgray")))
  (= fresh (--> () (list (Dial 0 0 (Position 1 3)) (Dial 1 1 (Position 2 3)) (Dial 2 2 (Position 3 3)))))
  (= dials (initnext ((fresh)) (prev dials)))
  (= lamp (initnext (Lamp false (Position 2 1))
    (updateObj (prev lamp) "lit" (! (any (--> d (!= (.. d face) (.. (head dials) face))) dials)))))
  (on (clicked dials) (let (= i (.. (head (filter (--> d (== (.. d origin) click)) dials)) idx))
    (= dials (map (--> d (if (| (== (.. d idx) i) (== (.. d idx) (+ i 1))) then (updateObj d "face" (% (+ (.. d face) 1) 4)) else d))
                  dials))))
  (on left (= dials ((fresh))))
)
