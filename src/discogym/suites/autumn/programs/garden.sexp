; Garden: the agent (white) walks with the arrows. A click on the soil (brown beds) plants a seed (tan) there.
; Walking into the well (blue) fills the watering can with three waterings (the agent turns cyan while it holds
; water); stepping onto a seed or a sprout with water waters it (dark green while it is wet). A wet plant grows
; at a random moment, about one step in four: a seed into a sprout (lime), a sprout into a flower (pink, yellow
; or violet, drawn at random), and it is dry again. A click on a flower picks it.
(program
  (= GRID_SIZE 12)
  (object Well (list (Cell 0 0 "blue") (Cell 1 0 "blue") (Cell 0 1 "blue") (Cell 1 1 "blue")))
  (object Soil (map (--> i (Cell i 0 "brown")) (range 0 8)))
  (object Plant (: stage Int) (: wet Bool) (: hue String)
    (Cell 0 0 (if (== stage 2) then hue else (if wet then "darkgreen" else (if (== stage 0) then "tan" else "lime")))))
  (object Agent (: water Int) (Cell 0 0 (if (> water 0) then "cyan" else "white")))
  (= well (Well (Position 0 0)))
  (= beds (initnext (list (Soil (Position 2 4)) (Soil (Position 2 7)) (Soil (Position 2 10))) (prev beds)))
  (= inBed (--> p (& (& (>= (.. p x) 2) (<= (.. p x) 9)) (| (| (== (.. p y) 4) (== (.. p y) 7)) (== (.. p y) 10)))))
  (= plants (initnext (list)
    (map (--> k (if (& (.. k wet) (== (uniformChoice (list 0 1 2 3)) 0))
                 then (updateObj (updateObj k "stage" (+ (.. k stage) 1)) "wet" false) else k))
         (prev plants))))
  (= agent (initnext (Agent 0 (Position 5 1)) (prev agent)))
  (= inWell (--> p (& (<= (.. p x) 1) (<= (.. p y) 1))))
  (= walk (--> dir (let (= spot (addPositions (.. agent origin) dir))
    (if (! (isWithinBounds spot)) then agent
     else (if (inWell spot) then (updateObj agent "water" 3)
     else (if (& (> (.. agent water) 0) (any (--> k (& (== (.. k origin) spot) (& (< (.. k stage) 2) (! (.. k wet))))) plants))
            then (let (= plants (map (--> k (if (== (.. k origin) spot) then (updateObj k "wet" true) else k)) plants))
                      (updateObj (updateObj agent "origin" spot) "water" (- (.. agent water) 1)))
     else (updateObj agent "origin" spot)))))))
  (on left (= agent (walk (Position -1 0))))
  (on right (= agent (walk (Position 1 0))))
  (on up (= agent (walk (Position 0 -1))))
  (on down (= agent (walk (Position 0 1))))
  (on (& clicked (& (inBed click) (! (any (--> k (== (.. k origin) click)) plants))))
    (= plants (addObj plants (Plant 0 false (uniformChoice (list "pink" "yellow" "violet")) click))))
  (on (clicked (filter (--> k (== (.. k stage) 2)) plants)) (= plants (removeObj plants (--> k (== (.. k origin) click)))))
)
