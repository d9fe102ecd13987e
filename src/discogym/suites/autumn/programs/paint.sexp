; Paint: clicking paints a cell in the current colour; left and right cycle through the colours.
(program
  (= GRID_SIZE 16)
  (object Dab (: color String) (Cell 0 0 color))
  (object Swatch (: color String) (list (Cell 0 0 color) (Cell 1 0 color)))
  (= colors (list "red" "orange" "yellow" "green" "blue" "purple"))
  (= current (initnext 0 (prev current)))
  (= swatch (initnext (Swatch "red" (Position 0 0)) (updateObj (prev swatch) "color" (at colors current))))
  (= dabs (initnext (list) (prev dabs)))
  (on (clicked) (= dabs (addObj (removeObj dabs (--> d (== (.. d origin) click))) (Dab (at colors current) click))))
  (on left (= current (% (+ current 5) 6)))
  (on right (= current (% (+ current 1) 6)))
)
