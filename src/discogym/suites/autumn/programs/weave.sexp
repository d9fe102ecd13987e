; Weave: a row of stitches at the top is rewritten every step from the row before it, and the old rows move down
; one line, so the history of the row fills the cloth. In the first pattern (magenta lamp) a stitch is there when
; exactly one of its two neighbours was (the ends wrap around); in the second (cyan lamp) when its left neighbour
; differs from "itself or its right neighbour". Left and right choose the pattern; a click on the top row adds
; or takes away a stitch there; down starts again from a single stitch.
(program
  (= GRID_SIZE 25)
  (object Lamp (: rule Int) (Cell 0 0 (if (== rule 0) then "magenta" else "cyan")))
  (object Stitch (Cell 0 0 "gold"))
  (= W 25)
  (= seed (map (--> i (== i 12)) (range 0 W)))
  (= rule (initnext 0 (prev rule)))
  (= cell (--> (r i) (at r (% (+ i W) W))))
  (= rewrite (--> r (map (--> i (let (= a (cell r (- i 1))) (= b (cell r i)) (= c (cell r (+ i 1)))
    (if (== rule 0) then (!= a c) else (!= a (| b c))))) (range 0 W))))
  (= row (initnext seed (rewrite (prev row))))
  (= lamp (initnext (Lamp 0 (Position 0 24)) (updateObj (prev lamp) "rule" rule)))
  (= drawRow (--> r (map (--> i (Stitch (Position i 0))) (filter (--> i (at r i)) (range 0 W)))))
  (= cloth (initnext (drawRow seed)
    (concat (list (drawRow row) (filter (--> s (< (.. (.. s origin) y) 23)) (map moveDown (prev cloth)))))))
  (on left (= rule 0))
  (on right (= rule 1))
  (on (& clicked (== (.. click y) 0))
    (= row (map (--> i (if (== i (.. click x)) then (! (at row i)) else (at row i))) (range 0 W))))
  (on down (let (= row seed) (= cloth (drawRow seed))))
)
