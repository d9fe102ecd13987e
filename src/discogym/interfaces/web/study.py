"""A study of people for the open internet (``discogym serve --study STUDY.yaml``): the study file, who plays what,
and the participants' records.

The study file says which games people play (suites, task sets, tasks, condition, pace), how many tasks each
participant plays and how many people each task needs, the time limits, the consent and instruction texts and how a
participant finishes (a completion code, a link back to the recruiting platform). Participants arrive through entry
links (Prolific's ``PROLIFIC_PID``, ``STUDY_ID`` and ``SESSION_ID``, or a plain ``id``) and get a secret of the
server's own, kept in a cookie and in the address of their pages; only its SHA-256 is written down.

Tasks are assigned when a participant consents: the ones the fewest people have been given so far, ties broken by
an order drawn from the study's seed and the participant's number, then shuffled the same way, and held for them
for the study's ``hold_minutes``; a game they have not started by then goes back to the study. Each participant
plays each assigned task at most once (a started game is an attempt, counted for good). Participants, assignments,
attempts and the codes shown live in the study folder's SQLite database (``study.sqlite3``), each change one
transaction, so a server restarted on the same folder knows everyone again, and one server at a time serves a
study folder (:meth:`Study.claim`).
"""

import contextlib
import fcntl
import hashlib
import hmac
import ipaddress
import json
import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Literal, NamedTuple

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from discogym.core import EndingKind, Termination, UserError, get_suite
from discogym.core.running.storage import atomic_write

ASCII_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
STUDY_FILE = "study.yaml"  # the study file, copied into the study folder
ECHO_CHARS = 40  # values echoed back in a message are cut to this many characters
PACES = ("frame-rate", "turns")


def shortened(text: object, limit: int = ECHO_CHARS) -> str:
    """``text`` as a message quotes it: its repr, cut to ``limit`` characters."""
    quoted = repr(text)
    return quoted if len(quoted) <= limit else quoted[: limit - 3] + "..."


def ascii_id(text: str, what: str = "an id") -> str:
    """``text`` when it is 1 to 64 ASCII letters, digits, ``-`` or ``_`` (look-alike letters of other scripts are
    refused), else a UserError quoting it shortened."""
    if not ASCII_ID.fullmatch(text):
        raise UserError(f"{what} is 1 to 64 ASCII letters, digits, '-' or '_' (got {shortened(text)})")
    return text


class StudyGames(BaseModel):
    """One block of the games people play: tasks of one suite's task set, in one condition, at one pace."""

    model_config = ConfigDict(extra="forbid")

    suite: str
    split: str | None = Field(default=None, description="the task set (the suite's first when left out)")
    tasks: list[str] = Field(default_factory=list, description="task ids (every task of the split when empty)")
    condition: str | None = Field(default=None, description="the suite's condition for people when left out")
    pace: Literal["frame-rate", "turns"] | None = Field(
        default=None, description="for suites played at a frame rate: frame-rate (the default) or turns"
    )


class Completion(BaseModel):
    """How a participant who played every assigned task finishes: a code to paste, a link back, or both."""

    model_config = ConfigDict(extra="forbid")

    code: str | None = Field(default=None, pattern=ASCII_ID.pattern)
    redirect: str | None = Field(default=None, pattern=r"^https://[^\s\"'<>]+$", max_length=2000)
    # shown instead of the code (and without the redirect, which carries it) to a participant who ended every game
    # but not every one with the study's minimum engagement (Prolific takes several codes per study)
    incomplete_code: str | None = Field(default=None, pattern=ASCII_ID.pattern)

    @model_validator(mode="after")
    def _something(self) -> "Completion":
        if self.code is None and self.redirect is None:
            raise ValueError("give a completion code, a redirect URL (https://...), or both")
        return self


class StudyFile(BaseModel):
    """What ``STUDY.yaml`` holds (docs/web.md, "Running a study")."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=ASCII_ID.pattern)
    seed: int = Field(default=0, ge=0, le=2**63 - 1)
    games: list[StudyGames] = Field(min_length=1)
    tasks_per_participant: int = Field(ge=1, le=100)
    people_per_task: int = Field(ge=1, le=100_000)
    minutes_per_game: float = Field(default=20.0, gt=0, le=24 * 60)
    idle_minutes: float = Field(default=5.0, gt=0, le=24 * 60)
    participants_per_address: int = Field(default=4, ge=1, le=100_000)
    # a game counts as completed when its test was answered (the task ended it, or a step or time limit) after at
    # least this many seconds of play; a game ended at once, or left, does not
    min_seconds_per_game: float = Field(default=0.0, ge=0, le=24 * 3600)
    # how long a participant's unstarted games are held for them after they consent; then they go back to the
    # study for others (default: tasks_per_participant * minutes_per_game + 30)
    hold_minutes: float | None = Field(default=None, gt=0, le=7 * 24 * 60)
    consent: str = Field(min_length=1, max_length=20_000)
    instructions: str = Field(min_length=1, max_length=20_000)
    completion: Completion


class Slot(NamedTuple):
    """One game a participant can be given: a task of a suite's task set, in a condition, at a pace."""

    suite: str
    split: str
    task: str
    condition: str
    pace: str | None

    def label(self) -> str:
        return f"{self.suite}/{self.task}"


def load_study_file(path: Path) -> StudyFile:
    """The study file at ``path``, or a UserError naming what is wrong in it."""
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise UserError(f"cannot read the study file {path}: {err}") from None
    try:
        return StudyFile.model_validate(document)
    except ValidationError as err:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'the file'}: {e['msg']}" for e in err.errors())
        raise UserError(f"{path} is not a study file: {problems}") from None


def study_slots(study: StudyFile) -> list[Slot]:
    """Every game of the study, checked against the suites (a UserError names an unknown suite, task set, task,
    condition or pace)."""
    slots: list[Slot] = []
    for block in study.games:
        suite = get_suite(block.suite)
        split = block.split or suite.splits()[0]
        known = {task.id for task in suite.tasks(split)}
        tasks = block.tasks or sorted(known)
        unknown = [task for task in tasks if task not in known]
        if unknown:
            raise UserError(f"suite {suite.name}'s task set {split} has no task {', '.join(map(shortened, unknown))}")
        condition = suite.condition(block.condition or suite.people_condition or suite.conditions()[0].name).name
        pace = block.pace or ("frame-rate" if suite.frame_rate_play else None)
        if pace is not None and not suite.frame_rate_play:
            raise UserError(f"suite {suite.name} is played turn by turn: leave out pace")
        slots.extend(Slot(suite.name, split, task, condition, pace) for task in tasks)
    if len(set(slots)) != len(slots):
        raise UserError("the study file lists a game twice")
    if study.tasks_per_participant > len(slots):
        raise UserError(f"tasks_per_participant is {study.tasks_per_participant}, but the study has {len(slots)} games")
    return slots


def prepare_study_folder(study_file: Path, folder: Path) -> None:
    """Make the study's folder, keeping a copy of its study file there; a folder that holds another study's
    file is a UserError (a study's participants and games are not mixed with another's)."""
    text = study_file.read_text(encoding="utf-8")
    kept = folder / STUDY_FILE
    if kept.exists() and kept.read_text(encoding="utf-8") != text:
        raise UserError(
            f"{folder} holds another study (its {STUDY_FILE} differs from {study_file}); choose another --out"
        )
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write(kept, text)


class Attempt(BaseModel):
    """One assigned game a participant started: running until it ended, then its episode and how it ended."""

    slot: int  # index into the study's slots
    game: str  # the game's opaque id (its calls' journal is ``journal/GAME.jsonl`` while it runs)
    episode: str = ""  # the episode file's name, once written
    ending: str | None = None  # None while the game runs
    seconds: float | None = None  # how long it was played
    completed: bool = False  # answered after the minimum time (Study.completes)


class ParticipantRecord(BaseModel):
    """What the study knows of one participant, read from the study's database at one moment."""

    model_config = ConfigDict(extra="forbid")

    number: int
    platform_ids: dict[str, str]  # PROLIFIC_PID, STUDY_ID, SESSION_ID or id, as the entry link gave them
    secret_sha256: str
    # the keyed hash of the address group they entered from (Study.address_key): meaningless without the study
    # folder's key, so no record holds their address
    address_key: str
    consented: bool = False
    held: bool = False  # their unstarted games are still held for them (the hold ends hold_minutes after consent)
    assigned: list[int] = Field(default_factory=list)  # indexes into the study's slots, in playing order
    attempts: list[Attempt] = Field(default_factory=list)  # the games they started, in order
    code: str | None = None  # the code they were shown: "completion" or "incomplete" (None before the end)

    @property
    def label(self) -> str:
        """The participant's name in episodes (the ``client`` option): their number, not the platform's id."""
        return f"p{self.number:05d}"

    @property
    def running(self) -> Attempt | None:
        """The game they are playing, or None."""
        return next((attempt for attempt in self.attempts if attempt.ending is None), None)

    @property
    def played(self) -> list[Attempt]:
        """The games that ended."""
        return [attempt for attempt in self.attempts if attempt.ending is not None]

    @property
    def expired(self) -> bool:
        """Their hold ended before they started every game: the games left went back to the study."""
        return self.consented and not self.held and len(self.attempts) < len(self.assigned)

    @property
    def finished(self) -> bool:
        """Nothing more to play: every game ended, or the hold of those not started ended."""
        return self.consented and self.running is None and (len(self.played) == len(self.assigned) or not self.held)

    @property
    def completed(self) -> bool:
        """Every assigned game ended and each was completed: what earns the completion code."""
        played = self.played
        return self.consented and len(played) == len(self.assigned) and all(game.completed for game in played)

    def next_slot(self) -> int | None:
        """The next assigned game not started yet, or None (none left, one running, or the hold over)."""
        if not self.consented or not self.held or self.running is not None:
            return None
        return self.assigned[len(self.attempts)] if len(self.attempts) < len(self.assigned) else None


def secret_digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class StudyFull(UserError):
    """Every game has the people it needs; no one new is taken."""


class StudyUnavailable(Exception):
    """The study's database cannot be changed just now (a full disk, or a lock held too long): answered 503."""


DATABASE = "study.sqlite3"  # in the study folder
SERVER_LOCK = "server.lock"  # in the study folder: held by the one server serving the study
SCHEMA_VERSION = 1
SCHEMA = (
    # a number is never given twice (AUTOINCREMENT), even after its row is deleted
    """CREATE TABLE participants (
        number INTEGER PRIMARY KEY AUTOINCREMENT,
        platform_key TEXT NOT NULL UNIQUE,
        platform_ids TEXT NOT NULL,
        secret_sha256 TEXT NOT NULL UNIQUE,
        address_key TEXT NOT NULL,
        consented_at REAL,
        hold_until REAL)""",
    "CREATE INDEX participants_by_address ON participants (address_key)",
    """CREATE TABLE assignments (
        participant INTEGER NOT NULL,
        position INTEGER NOT NULL,
        slot INTEGER NOT NULL,
        PRIMARY KEY (participant, position),
        UNIQUE (participant, slot))""",
    # one attempt per participant and game, counted for good from its start
    """CREATE TABLE attempts (
        participant INTEGER NOT NULL,
        slot INTEGER NOT NULL,
        game TEXT NOT NULL UNIQUE,
        started_at REAL NOT NULL,
        episode TEXT NOT NULL DEFAULT '',
        ending TEXT,
        seconds REAL,
        completed INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (participant, slot))""",
    """CREATE TABLE completions (
        participant INTEGER PRIMARY KEY,
        code TEXT NOT NULL CHECK (code IN ('completion', 'incomplete')),
        at REAL NOT NULL)""",
)


def open_database(path: Path) -> sqlite3.Connection:
    """The study's database at ``path``, made on first use; a UserError when it is damaged, or when the folder
    holds the participant files of an earlier discogym instead."""
    if not path.exists() and (path.parent / "participants").is_dir():
        raise UserError(
            f"{path.parent} holds a study run by an earlier discogym (participants/*.json): finish it with that "
            "version, or give this study another --out"
        )
    try:
        db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=10.0)
        db.execute("PRAGMA journal_mode=WAL")  # readers (the dashboard) never block the server
        db.execute("PRAGMA synchronous=FULL")  # a change is on disk when its transaction ends
        check = db.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            raise UserError(f"the study database {path} is damaged ({check}); restore it from a copy")
        db.execute("BEGIN IMMEDIATE")
        if db.execute("PRAGMA user_version").fetchone()[0] == 0:
            for statement in SCHEMA:
                db.execute(statement)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        db.execute("COMMIT")
    except sqlite3.DatabaseError as err:
        raise UserError(f"the study database {path} cannot be used: {err}") from None
    return db


class Study:
    """The study's participants, who plays what, and their games, in the study folder's SQLite database: every
    change one transaction, so a crash never leaves half of one, and numbers and quotas stay right even when
    another process (the researcher's dashboard) reads the database at the same time. Safe to use from several
    threads. ``clock`` gives the time of holds and attempts (seconds since the epoch)."""

    def __init__(self, study: StudyFile, folder: Path, clock: Callable[[], float] = time.time) -> None:
        self.file = study
        self.folder = folder
        self.slots = study_slots(study)
        self.clock = clock
        self._lock = threading.Lock()
        self._numbers: dict[str, int] = {}  # secret digests found so far, and their participants' numbers
        self._address_secret = _address_secret(folder)
        self._db = open_database(folder / DATABASE)
        self._claim: IO[str] | None = None

    def claim(self) -> None:
        """Hold the study folder for this server while it runs: a second server on the same folder is refused
        (its games would run where this one cannot see them). Released by :meth:`release`, or when the process
        ends, however it ends."""
        handle = (self.folder / SERVER_LOCK).open("a+", encoding="utf-8")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise UserError(
                f"another discogym server is serving the study in {self.folder}: stop it first, or give this "
                "one another --out"
            ) from None
        self._claim = handle

    def release(self) -> None:
        """Let another server serve the study folder (this one stopped)."""
        if self._claim is not None:
            self._claim.close()
            self._claim = None

    def close(self) -> None:
        """Release the study folder and close the database."""
        self.release()
        with self._lock:
            self._db.close()

    def address_key(self, address: str) -> str:
        """Which address group a participant came from (:func:`address_group`), as a hash keyed with the study
        folder's secret: participants of one group are counted together, and no record holds their address."""
        group = address_group(address).encode()
        return hmac.new(self._address_secret, group, hashlib.sha256).hexdigest()

    @contextlib.contextmanager
    def _change(self) -> Iterator[sqlite3.Connection]:
        """One change of the study, all or nothing (a StudyUnavailable when the disk is full)."""
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    yield self._db
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")
            except sqlite3.OperationalError as err:
                with contextlib.suppress(sqlite3.OperationalError):
                    self._db.execute("ROLLBACK")
                raise StudyUnavailable(
                    f"the server cannot save just now ({err}); please come back to this page in a few minutes"
                ) from None

    # Records

    def _record(self, db: sqlite3.Connection, number: int) -> ParticipantRecord | None:
        row = db.execute(
            "SELECT platform_ids, secret_sha256, address_key, consented_at, hold_until FROM participants "
            "WHERE number = ?",
            (number,),
        ).fetchone()
        if row is None:
            return None
        ids, digest, address, consented_at, hold_until = row
        assigned = db.execute("SELECT slot FROM assignments WHERE participant = ? ORDER BY position", (number,))
        attempts = db.execute(
            "SELECT slot, game, episode, ending, seconds, completed FROM attempts WHERE participant = ? ORDER BY rowid",
            (number,),
        )
        code = db.execute("SELECT code FROM completions WHERE participant = ?", (number,)).fetchone()
        return ParticipantRecord(
            number=number,
            platform_ids=json.loads(ids),
            secret_sha256=digest,
            address_key=address,
            consented=consented_at is not None,
            held=hold_until is not None and hold_until > self.clock(),
            assigned=[slot for (slot,) in assigned],
            attempts=[
                Attempt(slot=slot, game=game, episode=episode, ending=ending, seconds=seconds, completed=bool(done))
                for slot, game, episode, ending, seconds, done in attempts
            ],
            code=code[0] if code else None,
        )

    def participant(self, number: int) -> ParticipantRecord | None:
        """The participant numbered ``number`` as the database holds them now, or None."""
        with self._lock:
            return self._record(self._db, number)

    def participants(self) -> list[ParticipantRecord]:
        """Every participant, by number."""
        with self._lock:
            numbers = [n for (n,) in self._db.execute("SELECT number FROM participants ORDER BY number")]
            return [record for n in numbers if (record := self._record(self._db, n)) is not None]

    def number_of(self, secret: str) -> int | None:
        """The number of the participant whose secret is ``secret``, or None."""
        digest = secret_digest(secret)
        number = self._numbers.get(digest)
        if number is None:
            with self._lock:
                row = self._db.execute("SELECT number FROM participants WHERE secret_sha256 = ?", (digest,)).fetchone()
            if row is None:
                return None
            number = self._numbers[digest] = row[0]
        return number

    def seen_number(self, secret: str) -> int | None:
        """The number of the participant whose secret is ``secret`` if this object looked it up or gave it before,
        else None; never asks the database (for the event loop, which must not wait on it)."""
        return self._numbers.get(secret_digest(secret))

    def by_secret(self, secret: str) -> ParticipantRecord | None:
        """The participant whose secret is ``secret``, or None."""
        number = self.number_of(secret)
        return None if number is None else self.participant(number)

    # Arrivals

    def enter(self, platform_ids: dict[str, str], address: str) -> tuple[ParticipantRecord, str]:
        """A new participant from an entry link: their record and their secret (known only to them). A platform id
        already entered is refused (the first person holds it; they come back through their own link), as is an
        address group that brought :attr:`StudyFile.participants_per_address` people already."""
        key = platform_key(platform_ids)
        group = self.address_key(address)
        secret = secrets.token_urlsafe(32)
        with self._change() as db:
            if db.execute("SELECT 1 FROM participants WHERE platform_key = ?", (key,)).fetchone():
                raise UserError(
                    "this id has entered the study already: go on from the page you were given (its address, or "
                    "this browser, keeps your place)"
                )
            (count,) = db.execute("SELECT COUNT(*) FROM participants WHERE address_key = ?", (group,)).fetchone()
            if count >= self.file.participants_per_address:
                raise UserError("too many participants came from this network address")
            if not self._open_slots(db):
                raise StudyFull("the study has all the participants it needs; thank you for your interest")
            number = db.execute(
                "INSERT INTO participants (platform_key, platform_ids, secret_sha256, address_key) VALUES (?, ?, ?, ?)",
                (key, json.dumps(platform_ids, sort_keys=True), secret_digest(secret), group),
            ).lastrowid
            record = self._record(db, number or 0)
        assert record is not None
        return record, secret

    # Assignment

    def _given(self, db: sqlite3.Connection) -> list[int]:
        """How many people each game is given: those who started it, and those holding it unstarted."""
        counts = [0] * len(self.slots)
        started = db.execute("SELECT slot, COUNT(*) FROM attempts GROUP BY slot")
        held = db.execute(
            "SELECT a.slot, COUNT(*) FROM assignments a JOIN participants p ON p.number = a.participant "
            "WHERE p.hold_until > ? AND NOT EXISTS "
            "(SELECT 1 FROM attempts t WHERE t.participant = a.participant AND t.slot = a.slot) GROUP BY a.slot",
            (self.clock(),),
        )
        for slot, count in [*started, *held]:
            if 0 <= slot < len(counts):
                counts[slot] += count
        return counts

    def given(self) -> list[int]:
        """How many people each game of :attr:`slots` is given now (started, or held for them)."""
        with self._lock:
            return self._given(self._db)

    def _open_slots(self, db: sqlite3.Connection) -> list[int]:
        return [i for i, count in enumerate(self._given(db)) if count < self.file.people_per_task]

    def hold_seconds(self) -> float:
        """How long a participant's unstarted games are held for them after they consent."""
        minutes = self.file.hold_minutes
        if minutes is None:
            minutes = self.file.tasks_per_participant * self.file.minutes_per_game + 30
        return minutes * 60

    def consent(self, record: ParticipantRecord) -> None:
        """The participant agreed: assign their games (balanced over the study, the order from the seed) and
        hold them for :meth:`hold_seconds`."""
        with self._change() as db:
            current = self._record(db, record.number)
            if current is None:
                raise UserError("no such participant")
            if current.consented:
                return
            counts = self._given(db)
            rng = np.random.default_rng([self.file.seed, record.number])
            tiebreak = rng.permutation(len(self.slots))
            open_slots = [i for i in range(len(self.slots)) if counts[i] < self.file.people_per_task]
            if not open_slots:
                raise StudyFull("the study has all the participants it needs; thank you for your interest")
            ranked = sorted(open_slots, key=lambda i: (counts[i], int(tiebreak[i])))
            chosen = ranked[: self.file.tasks_per_participant]
            order = [chosen[i] for i in rng.permutation(len(chosen))]
            db.executemany(
                "INSERT INTO assignments (participant, position, slot) VALUES (?, ?, ?)",
                [(record.number, position, slot) for position, slot in enumerate(order)],
            )
            now = self.clock()
            db.execute(
                "UPDATE participants SET consented_at = ?, hold_until = ? WHERE number = ?",
                (now, now + self.hold_seconds(), record.number),
            )

    # Games

    def begin(self, number: int, game: str) -> int:
        """Start the participant's next assigned game as the attempt ``game`` (an opaque id); return its slot. A
        UserError when they have none to start (all played, one running, or their hold ended)."""
        with self._change() as db:
            record = self._record(db, number)
            if record is None:
                raise UserError("no such participant")
            slot = record.next_slot()
            if slot is None:
                if record.running is not None:
                    raise UserError("your game is still running: reload this page")
                if record.expired:
                    raise UserError("the time for your games ran out, and they went to other participants")
                raise UserError("you have played every game of the study")
            db.execute(
                "INSERT INTO attempts (participant, slot, game, started_at) VALUES (?, ?, ?, ?)",
                (number, slot, game, self.clock()),
            )
        return slot

    def played(self, game: str, episode: str, ending: str, seconds: float) -> None:
        """The attempt ``game`` ended after ``seconds`` of play: note its episode, its ending and whether it counts
        as completed (:meth:`completes`)."""
        with self._change() as db:
            db.execute(
                "UPDATE attempts SET episode = ?, ending = ?, seconds = ?, completed = ? "
                "WHERE game = ? AND ending IS NULL",
                (episode, ending, round(seconds, 3), int(self.completes(ending, seconds)), game),
            )

    def running(self) -> list[tuple[int, Attempt]]:
        """Every attempt the database holds as running (after a crash: the games to restore), with its
        participant's number."""
        with self._lock:
            rows = self._db.execute(
                "SELECT participant, slot, game FROM attempts WHERE ending IS NULL ORDER BY rowid"
            ).fetchall()
        return [(number, Attempt(slot=slot, game=game)) for number, slot, game in rows]

    def completes(self, ending: str, seconds: float) -> bool:
        """Whether a game that ended so counts as completed: its test answered (ended by the task, or by a step or
        time limit, never by the person stopping or leaving), or cut short by the server, after
        :attr:`StudyFile.min_seconds_per_game` of play."""
        kind = Termination(ending).kind if ending in TERMINATIONS else None
        ours = ending == Termination.SERVER_STOPPED.value  # the participant is not to blame
        return (kind in (EndingKind.TASK, EndingKind.LIMIT) or ours) and seconds >= self.file.min_seconds_per_game

    def completion(self, record: ParticipantRecord) -> str | None:
        """The code the finished participant is shown, "completion" or "incomplete", decided once and kept (the
        dashboard shows it); None while they have games to play."""
        if not record.finished or record.code is not None:
            return record.code
        code = "completion" if record.completed else "incomplete"
        with self._change() as db:
            db.execute(
                "INSERT OR IGNORE INTO completions (participant, code, at) VALUES (?, ?, ?)",
                (record.number, code, self.clock()),
            )
            (kept,) = db.execute("SELECT code FROM completions WHERE participant = ?", (record.number,)).fetchone()
        return str(kept)


TERMINATIONS = {t.value for t in Termination}
ADDRESS_SECRET = "address.key"  # in the study folder: the key of the participants' address hashes


def address_group(address: str) -> str:
    """The group a network address counts in: an IPv4 address itself, an IPv6 address's /64 (one household or
    machine is given a whole /64, so counting single IPv6 addresses caps nothing); anything else as it is."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.ip_network(f"{parsed}/64", strict=False))
    return str(parsed)


def _address_secret(folder: Path) -> bytes:
    """The study folder's key for address hashes, made on first use (readable by its owner only)."""
    path = folder / ADDRESS_SECRET
    if not path.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write(path, secrets.token_hex(32))
        path.chmod(0o600)
    return bytes.fromhex(path.read_text(encoding="ascii").strip())


def platform_key(platform_ids: dict[str, str]) -> str:
    """Who a participant is on their platform: Prolific's participant id, else the plain id."""
    return platform_ids.get("PROLIFIC_PID") or platform_ids.get("id") or ""


__all__ = [
    "PACES",
    "Attempt",
    "ParticipantRecord",
    "Slot",
    "Study",
    "StudyFile",
    "StudyFull",
    "StudyUnavailable",
    "ascii_id",
    "load_study_file",
    "platform_key",
    "shortened",
]
