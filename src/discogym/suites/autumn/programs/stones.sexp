; Stones: three piles of stones (white) stand side by side. On your turn (blue lamp) a click on a stone takes it
; and every stone above it from that pile; the next step the computer takes its turn (orange lamp): it takes
; stones from one pile so as to leave piles whose binary digits, added without carrying, are all even, or one
; stone from the biggest pile when it cannot. Whoever takes the last stone wins: the lamp turns green when you
; do, red when the computer does. Down starts a new game.
(program
  (= GRID_SIZE 9)
  (object Stone (Cell 0 0 "white"))
  (object Lamp (: mode Int) (Cell 0 0 (at (list "blue" "orange" "green" "red") mode)))
  (= bit (--> (n k) (% (/ n (at (list 1 2 4) k)) 2)))
  (= xor (--> (a b) (foldl (--> (acc k) (+ acc (* (% (+ (bit a k) (bit b k)) 2) (at (list 1 2 4) k)))) 0 (range 0 3))))
  (= nimSum (--> ps (foldl xor 0 ps)))
  (= reply (--> ps (let (= s (nimSum ps))
    (= good (filter (--> i (< (xor (at ps i) s) (at ps i))) (range 0 3)))
    (= big (foldl (--> (best i) (if (> (at ps i) (at ps best)) then i else best)) 0 (range 0 3)))
    (map (--> i (if (& (!= s 0) (== i (head good))) then (xor (at ps i) s)
                 else (if (& (== s 0) (== i big)) then (- (at ps i) 1) else (at ps i))))
         (range 0 3)))))
  (= empty (--> ps (== (+ (at ps 0) (+ (at ps 1) (at ps 2))) 0)))
  (= opening (list 3 4 5))
  (= piles (initnext opening (if (== (.. lamp mode) 1) then (reply (prev piles)) else (prev piles))))
  (= lamp (initnext (Lamp 0 (Position 4 0))
    (if (== (.. (prev lamp) mode) 1) then (updateObj (prev lamp) "mode" (if (empty piles) then 3 else 0)) else (prev lamp))))
  (= draw (--> ps (concat (map (--> i (map (--> h (Stone (Position (+ 2 (* 2 i)) (- 8 h)))) (range 0 (at ps i)))) (range 0 3)))))
  (= stones (initnext (draw opening) (draw piles)))
  (on (& (clicked stones) (== (.. lamp mode) 0))
    (let (= i (/ (- (.. click x) 2) 2)) (= h (- 8 (.. click y)))
      (= piles (map (--> k (if (== k i) then h else (at piles k))) (range 0 3)))
      (= lamp (updateObj lamp "mode" (if (empty piles) then 2 else 1)))))
  (on down (let (= piles opening) (= lamp (Lamp 0 (Position 4 0)))))
)
