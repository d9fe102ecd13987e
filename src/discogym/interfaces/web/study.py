"""A study of people for the open internet (``discogym serve --study STUDY.yaml``): the study file, who plays what,
and the participants' records.

The study file says which games people play (suites, task sets, tasks, condition, pace), how many tasks each
participant plays and how many people each task needs, the time limits, the consent and instruction texts and how a
participant finishes (a completion code, a link back to the recruiting platform). Participants arrive through entry
links (Prolific's ``PROLIFIC_PID``, ``STUDY_ID`` and ``SESSION_ID``, or a plain ``id``) and get a secret of the
server's own, kept in a cookie and in the address of their pages; only its SHA-256 is written down.

Tasks are assigned when a participant consents: the ones the fewest people have been given so far, ties broken by
an order drawn from the study's seed and the participant's number, then shuffled the same way. Each participant
plays each assigned task once. Records live in ``STUDY_DIR/participants/NUMBER.json`` (written whole or not at all),
so a server restarted on the same folder knows everyone again.
"""

import hashlib
import hmac
import ipaddress
import re
import secrets
import threading
from pathlib import Path
from typing import Literal, NamedTuple

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from discogym.core import EndingKind, Termination, UserError, get_suite
from discogym.core.running.storage import atomic_write

ASCII_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
PARTICIPANTS_DIR = "participants"
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


class PlayedGame(BaseModel):
    """One assigned game, played: its episode file and how it ended."""

    slot: int  # index into the study's slots
    episode: str
    ending: str
    seconds: float | None = None  # how long it was played (None in records written before it was kept)
    completed: bool = True  # answered after the minimum time (records written before the rule count as completed)


class ParticipantRecord(BaseModel):
    """What the study knows of one participant (``participants/NUMBER.json``)."""

    model_config = ConfigDict(extra="forbid")

    number: int
    platform_ids: dict[str, str]  # PROLIFIC_PID, STUDY_ID, SESSION_ID or id, as the entry link gave them
    secret_sha256: str
    consented: bool = False
    assigned: list[int] = Field(default_factory=list)  # indexes into the study's slots, in playing order
    # the keyed hash of the address group they entered from (Study.address_key): counted again after a restart,
    # and meaningless without the study folder's key
    address_key: str | None = None
    played: list[PlayedGame] = Field(default_factory=list)

    @property
    def label(self) -> str:
        """The participant's name in episodes (the ``client`` option): their number, not the platform's id."""
        return f"p{self.number:05d}"

    @property
    def finished(self) -> bool:
        return self.consented and len(self.played) == len(self.assigned)

    @property
    def completed(self) -> bool:
        """Finished, every game completed: what earns the completion code."""
        return self.finished and all(game.completed for game in self.played)

    def next_slot(self) -> int | None:
        """The next assigned game not played yet, or None."""
        return self.assigned[len(self.played)] if self.consented and not self.finished else None


def secret_digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class StudyFull(UserError):
    """Every game has the people it needs; no one new is taken."""


class Study:
    """The study's participants and who plays what; safe to use from several threads."""

    def __init__(self, study: StudyFile, folder: Path) -> None:
        self.file = study
        self.folder = folder
        self.slots = study_slots(study)
        self.records: dict[int, ParticipantRecord] = {}
        self._by_secret: dict[str, int] = {}
        self._by_platform_id: dict[str, int] = {}
        self._per_address: dict[str, int] = {}
        self._lock = threading.Lock()
        self._address_secret = _address_secret(folder)
        for record in self._read_records():
            self._know(record)
            if record.address_key is not None:
                self._per_address[record.address_key] = self._per_address.get(record.address_key, 0) + 1

    def address_key(self, address: str) -> str:
        """Which address group a participant came from (:func:`address_group`), as a hash keyed with the study
        folder's secret: participants of one group are counted together, and no record holds their address."""
        group = address_group(address).encode()
        return hmac.new(self._address_secret, group, hashlib.sha256).hexdigest()

    # Records

    def _read_records(self) -> list[ParticipantRecord]:
        folder = self.folder / PARTICIPANTS_DIR
        paths = sorted(folder.glob("*.json")) if folder.is_dir() else []
        records = []
        for path in paths:
            try:
                records.append(ParticipantRecord.model_validate_json(path.read_bytes()))
            except (OSError, ValidationError) as err:
                raise UserError(f"{path} is not a participant record: {str(err).splitlines()[0]}") from None
        return records

    def _know(self, record: ParticipantRecord) -> None:
        self.records[record.number] = record
        self._by_secret[record.secret_sha256] = record.number
        self._by_platform_id[platform_key(record.platform_ids)] = record.number

    def save(self, record: ParticipantRecord) -> None:
        """Write the participant's record (whole or not at all)."""
        path = self.folder / PARTICIPANTS_DIR / f"{record.number:05d}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, record.model_dump_json(indent=1) + "\n")

    # Arrivals

    def enter(self, platform_ids: dict[str, str], address: str) -> tuple[ParticipantRecord, str]:
        """A new participant from an entry link: their record and their secret (known only to them). A platform id
        already entered is refused (the first person holds it; they come back through their own link), as is an
        address that brought :attr:`StudyFile.participants_per_address` people already."""
        key = platform_key(platform_ids)
        with self._lock:
            if key in self._by_platform_id:
                raise UserError(
                    "this id has entered the study already: go on from the page you were given (its address, or "
                    "this browser, keeps your place)"
                )
            address = self.address_key(address)
            if self._per_address.get(address, 0) >= self.file.participants_per_address:
                raise UserError("too many participants came from this network address")
            if not self._open_slots():
                raise StudyFull("the study has all the participants it needs; thank you for your interest")
            secret = secrets.token_urlsafe(32)
            record = ParticipantRecord(
                number=len(self.records) + 1,
                platform_ids=dict(platform_ids),
                secret_sha256=secret_digest(secret),
                address_key=address,
            )
            self.save(record)
            self._know(record)
            self._per_address[address] = self._per_address.get(address, 0) + 1
        return record, secret

    def by_secret(self, secret: str) -> ParticipantRecord | None:
        """The participant whose secret is ``secret``, or None."""
        number = self._by_secret.get(secret_digest(secret))
        return None if number is None else self.records[number]

    # Assignment

    def _given(self) -> list[int]:
        counts = [0] * len(self.slots)
        for record in self.records.values():
            for slot in record.assigned:
                counts[slot] += 1
        return counts

    def _open_slots(self) -> list[int]:
        return [i for i, count in enumerate(self._given()) if count < self.file.people_per_task]

    def consent(self, record: ParticipantRecord) -> None:
        """The participant agreed: assign their games (balanced over the study, the order from the seed)."""
        with self._lock:
            if record.consented:
                return
            counts = self._given()
            rng = np.random.default_rng([self.file.seed, record.number])
            tiebreak = rng.permutation(len(self.slots))
            open_slots = [i for i in range(len(self.slots)) if counts[i] < self.file.people_per_task]
            if not open_slots:
                raise StudyFull("the study has all the participants it needs; thank you for your interest")
            ranked = sorted(open_slots, key=lambda i: (counts[i], int(tiebreak[i])))
            chosen = ranked[: self.file.tasks_per_participant]
            record.assigned = [chosen[i] for i in rng.permutation(len(chosen))]
            record.consented = True
            self.save(record)

    def played(self, record: ParticipantRecord, episode: str, ending: str, seconds: float = 0.0) -> None:
        """The participant's current game ended after ``seconds`` of play: note its episode, its ending and whether
        it counts as completed (:meth:`completes`), and move them on."""
        with self._lock:
            slot = record.next_slot()
            if slot is None:
                return
            done = self.completes(ending, seconds)
            game = PlayedGame(slot=slot, episode=episode, ending=ending, seconds=round(seconds, 3), completed=done)
            record.played.append(game)
            self.save(record)

    def completes(self, ending: str, seconds: float) -> bool:
        """Whether a game that ended so counts as completed: its test answered (ended by the task, or by a step or
        time limit, never by the person stopping or leaving) after :attr:`StudyFile.min_seconds_per_game`."""
        kind = Termination(ending).kind if ending in TERMINATIONS else None
        return kind in (EndingKind.TASK, EndingKind.LIMIT) and seconds >= self.file.min_seconds_per_game


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
    "ParticipantRecord",
    "Slot",
    "Study",
    "StudyFile",
    "StudyFull",
    "ascii_id",
    "load_study_file",
    "platform_key",
    "shortened",
]
