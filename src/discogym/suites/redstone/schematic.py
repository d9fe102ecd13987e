"""Redstone worlds to and from real Minecraft schematic files.

Two formats, chosen by the file's suffix:

- ``.schem``: the Sponge schematic format that WorldEdit and FastAsyncWorldEdit write and Litematica imports.
  We write version 3 (WorldEdit 7.3's default) or, on request, version 2 (for Amulet, which reads only v2, and
  other older tools), and read versions 1, 2 and 3.
- ``.litematic``: Litematica's own format (version 7, as Litematica for 1.21 writes it), one region.

Both are gzip-compressed NBT, written with ``nbtlib`` (and ``litemapy`` for the Litematica layout), from the
optional extra ``discogym[schematics]``. Files are stamped with Minecraft 1.21's data version (3953).

Origin convention: the world's smallest corner (``World.bounds()[0]``) is the schematic's ``(0, 0, 0)``, and the
file records that corner, so reading a file back restores every block at its original coordinates:

- ``.schem`` version 3: ``Offset`` is the corner and there is no ``Metadata.WorldEdit.Origin`` (so it counts as
  ``[0, 0, 0]``). Reading uses WorldEdit's rule, corner = ``Offset`` + ``Metadata.WorldEdit.Origin``, so a
  schematic saved with WorldEdit loads at the world coordinates it was copied from.
- ``.schem`` versions 1 and 2: ``Offset`` is the corner, as WorldEdit writes it; ``Metadata.WEOffsetX/Y/Z``
  (the corner relative to the paste origin) is the corner too, the paste origin being ``(0, 0, 0)``.
- ``.litematic``: the region sits at ``(0, 0, 0)``; ``Metadata.DiscogymOrigin`` (an int array) is the corner.
  A Litematica file without it loads with the schematic's origin at ``(0, 0, 0)``.

In the game, a ``.schem`` we wrote rebuilds the world where it was when pasted with its origin at the world's
``(0, 0, 0)`` (WorldEdit: ``//paste`` while standing there); a ``.litematic`` does so when its placement's origin
is the recorded corner.

Block states are written as the game writes them, with the game's ids (``minecraft:repeater``, where the palette
says ``minecraft:redstone_repeater``) and every property present, sorted by name:
``minecraft:repeater[delay=2,facing=west,locked=false,powered=false]``. The palette order is fixed
(air first, then the states sorted as text) and the gzip header carries no time stamp, so the same world always
gives the same bytes.

Reading accepts air (``minecraft:air``, ``cave_air``, ``void_air``) anywhere, and the repeater under either name;
any other block outside the redstone palette, or a palette block with a property value the palette does not have,
is a UserError naming each such block state and the positions where it occurs.
"""

import gzip
import importlib
import io
import re
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from discogym.core import UserError
from discogym.suites.redstone.blocks import AIR, PROPERTIES, Block, Pos, game_id, make_block, palette_id
from discogym.suites.redstone.world import MAX_COORD, World, check_extent, format_pos

DATA_VERSION: Final = 3953  # Minecraft Java Edition 1.21
SPONGE_VERSION: Final = 3
LITEMATIC_VERSION: Final = 7  # Litematica for 1.20.5 and later
LITEMATIC_SUBVERSION: Final = 1
SUFFIXES: Final = (".schem", ".litematic")
AIR_IDS: Final = frozenset({AIR, "minecraft:cave_air", "minecraft:void_air"})
REGION_NAME: Final = "discogym"
ORIGIN_KEY: Final = "DiscogymOrigin"  # Litematica metadata: the world position of the schematic's (0, 0, 0)
MAX_SIDE: Final = 0xFFFF  # Sponge sizes are unsigned shorts
POSITIONS_SHOWN: Final = 5
MAX_CELLS: Final = 2**22  # cells (air included) a schematic may declare: 4,194,304, e.g. 256 x 64 x 256
MAX_NBT_BYTES: Final = 64 * 2**20  # a schematic's size once decompressed

_STATE = re.compile(r"(?:([a-z0-9_.-]+):)?([a-z0-9_./-]+)(?:\[([^\]]*)\])?")


def block_state(block: Block) -> str:
    """The block as Minecraft writes a block state: the game's full id and every property, sorted by name."""
    full = make_block(block.id, **dict(block.props))
    return str(Block(game_id(full.id), full.props))


def parse_block_state(text: str) -> Block | None:
    """A schematic palette entry as a palette block, None for air, or a UserError saying why it cannot be one."""
    match = _STATE.fullmatch(text.strip())
    if match is None:
        raise UserError(f"{text} is not a block state (minecraft:id[name=value,...])")
    namespace, name, body = match.groups()
    block_id = palette_id(f"{namespace or 'minecraft'}:{name}")
    if block_id in AIR_IDS:
        return None
    if block_id not in PROPERTIES:
        raise UserError(f"{block_id} is not in the redstone palette")
    props: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in (body or "").split(","))):
        key, equals, value = part.partition("=")
        if not equals or key.strip() in props:
            raise UserError(f"{text} is not a block state (minecraft:id[name=value,...])")
        props[key.strip()] = value.strip()
    return make_block(block_id, **props)


def write_schematic(world: World, path: Path, *, sponge_version: int = SPONGE_VERSION) -> None:
    """Write ``world`` to ``path``: a Sponge schematic for ``.schem`` (version 3, or 2 when asked), a Litematica
    schematic for ``.litematic``."""
    suffix = _suffix(path)
    if suffix == ".schem":
        if sponge_version not in (2, 3):
            raise UserError(f"Sponge schematic version {sponge_version} cannot be written; use 2 or 3")
        data = sponge_bytes(world, sponge_version)
    else:
        data = litematic_bytes(world)
    try:
        path.write_bytes(data)
    except OSError as err:
        raise UserError(f"cannot write schematic {path}: {err.strerror}") from None


def read_schematic(path: Path) -> World:
    """The world in a ``.schem`` (Sponge versions 1-3) or ``.litematic`` file, at the coordinates it records."""
    suffix = _suffix(path)
    try:
        data = path.read_bytes()
    except OSError as err:
        raise UserError(f"cannot read schematic {path}: {err.strerror}") from None
    root = _parse_nbt(data, path.name)
    if suffix == ".schem":
        return _world_from_sponge(root, path.name)
    return _world_from_litematic(root, path.name)


def sponge_bytes(world: World, version: int = SPONGE_VERSION) -> bytes:
    """The world as a gzip-compressed Sponge schematic (version 2 or 3)."""
    nbt = _require("nbtlib")
    low, size = _box(world)
    width, height, length = size
    palette = [AIR, *sorted({block_state(block) for _, block in world} - {AIR})]
    index = {state: number for number, state in enumerate(palette)}
    cells = [0] * (width * height * length)
    for (x, y, z), block in world:
        cells[_cell_index((x - low[0], y - low[1], z - low[2]), width, length)] = index[block_state(block)]
    palette_tag = nbt.Compound({state: nbt.Int(number) for number, state in enumerate(palette)})
    data = nbt.ByteArray(_signed_bytes(encode_varints(cells)))
    offset = nbt.IntArray(list(low))
    sizes = {
        "Width": nbt.Short(_unsigned_short(width)),
        "Height": nbt.Short(_unsigned_short(height)),
        "Length": nbt.Short(_unsigned_short(length)),
    }
    body: dict[str, Any]
    if version >= 3:
        body = {
            "Version": nbt.Int(3),
            "DataVersion": nbt.Int(DATA_VERSION),
            "Metadata": nbt.Compound({"Name": nbt.String("discogym redstone world")}),
            **sizes,
            "Offset": offset,
            "Blocks": nbt.Compound({"Palette": palette_tag, "Data": data, "BlockEntities": nbt.List[nbt.Compound]([])}),
        }
        root = nbt.File({"Schematic": nbt.Compound(body)}, root_name="")
    else:
        body = {
            "Version": nbt.Int(2),
            "DataVersion": nbt.Int(DATA_VERSION),
            "Metadata": nbt.Compound(
                {"WEOffsetX": nbt.Int(low[0]), "WEOffsetY": nbt.Int(low[1]), "WEOffsetZ": nbt.Int(low[2])}
            ),
            **sizes,
            "Offset": offset,
            "PaletteMax": nbt.Int(len(palette)),
            "Palette": palette_tag,
            "BlockData": data,
            "BlockEntities": nbt.List[nbt.Compound]([]),
        }
        root = nbt.File(body, root_name="Schematic")
    return _gzip_nbt(root)


def litematic_bytes(world: World) -> bytes:
    """The world as a gzip-compressed Litematica schematic with one region."""
    nbt = _require("nbtlib")
    litemapy = _require("litemapy")
    low, size = _box(world)
    region = litemapy.Region(0, 0, 0, *size)
    for (x, y, z), block in world:
        full = make_block(block.id, **dict(block.props))
        region[x - low[0], y - low[1], z - low[2]] = litemapy.BlockState(game_id(full.id), **dict(full.props))
    schematic = litemapy.Schematic(
        name=REGION_NAME,
        author="discogym",
        description="A redstone world from discogym",
        regions={REGION_NAME: region},
        lm_version=LITEMATIC_VERSION,
        lm_subversion=LITEMATIC_SUBVERSION,
        mc_version=DATA_VERSION,
    )
    schematic.created = schematic.modified = 0  # no time stamps: the same world gives the same bytes
    root = schematic.to_nbt(save_soft=True)
    metadata = root["Metadata"]
    if "PreviewImageData" in metadata and len(metadata["PreviewImageData"]) == 0:
        del metadata["PreviewImageData"]  # litemapy writes an empty thumbnail; Litematica leaves it out
    metadata[ORIGIN_KEY] = nbt.IntArray(list(low))
    return _gzip_nbt(nbt.File(root, root_name=""))


def encode_varints(values: Iterable[int]) -> bytes:
    """Unsigned integers as varints (7 bits a byte, low bits first, high bit set on all but the last byte)."""
    out = bytearray()
    for value in values:
        while value >= 0x80:
            out.append((value & 0x7F) | 0x80)
            value >>= 7
        out.append(value)
    return bytes(out)


def decode_varints(data: bytes) -> list[int]:
    """The unsigned integers in varint-packed ``data``; ValueError if it ends inside a number."""
    values: list[int] = []
    value = shift = 0
    for byte in data:
        value |= (byte & 0x7F) << shift
        if byte & 0x80:
            shift += 7
            if shift > 28:
                raise ValueError("a varint longer than 5 bytes")
            continue
        values.append(value)
        value = shift = 0
    if shift:
        raise ValueError("the data ends inside a varint")
    return values


def _require(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:
        raise UserError(
            f"schematic files need the optional package {module}: pip install 'discogym[schematics]'"
        ) from None


def _suffix(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise UserError(f"{path.name}: a schematic file ends in {' or '.join(SUFFIXES)}")
    return suffix


def _box(world: World) -> tuple[Pos, Pos]:
    """The world's smallest corner and the size of its box (1x1x1 for an empty world)."""
    low, high = world.bounds()
    size = (high[0] - low[0] + 1, high[1] - low[1] + 1, high[2] - low[2] + 1)
    if max(size) > MAX_SIDE:
        raise UserError(f"the world is {size[0]}x{size[1]}x{size[2]} blocks; a schematic side is at most {MAX_SIDE}")
    return low, size


def _cell_index(local: Pos, width: int, length: int) -> int:
    x, y, z = local
    return x + z * width + y * width * length


def _unsigned_short(value: int) -> int:
    return value - 0x10000 if value >= 0x8000 else value


def _signed_bytes(data: bytes) -> npt.NDArray[np.int8]:
    """``data`` as the signed bytes an NBT byte array holds."""
    return np.frombuffer(data, dtype=np.int8)


def _unsigned_bytes(tag: Any) -> bytes:
    """The bytes of an NBT byte array."""
    return np.asarray(tag, dtype=np.int8).tobytes()


def _gzip_nbt(root: Any) -> bytes:
    buffer = io.BytesIO()
    root.write(buffer)
    return gzip.compress(buffer.getvalue(), mtime=0)


def _parse_nbt(data: bytes, source: str) -> Any:
    nbt = _require("nbtlib")
    if data[:2] == b"\x1f\x8b":
        data = _gunzip(data, source)
    try:
        return nbt.File.parse(io.BytesIO(data))
    except Exception as err:  # nbtlib raises struct, Unicode and its own errors on bad data
        raise UserError(f"{source} is not an NBT file ({type(err).__name__}: {err})") from None


def _gunzip(data: bytes, source: str) -> bytes:
    """``data`` decompressed; a UserError if it is damaged or larger than :data:`MAX_NBT_BYTES`."""
    inflater = zlib.decompressobj(wbits=31)  # gzip framing
    try:
        out = inflater.decompress(data, MAX_NBT_BYTES + 1)
    except zlib.error as err:
        raise UserError(f"{source}: the gzip data is damaged ({err})") from None
    if len(out) > MAX_NBT_BYTES:
        raise UserError(f"{source} decompresses to more than {MAX_NBT_BYTES // 2**20} MiB; too large a schematic")
    if not inflater.eof:
        raise UserError(f"{source}: the gzip data is damaged (it ends early)")
    return out


def _check_cells(size: tuple[int, int, int], source: str) -> None:
    """A UserError if a declared box is larger than :data:`MAX_CELLS`, before anything that size is made."""
    cells = abs(size[0] * size[1] * size[2])
    if cells > MAX_CELLS:
        raise UserError(
            f"{source} declares a {'x'.join(str(abs(n)) for n in size)} box ({cells:,} cells); "
            f"a schematic may hold at most {MAX_CELLS:,}"
        )


def _int(tag: Any, source: str, name: str) -> int:
    try:
        return int(tag)
    except (TypeError, ValueError):
        raise UserError(f"{source}: {name} must be a number") from None


def _vector(tag: Any, source: str, name: str) -> Pos:
    try:
        x, y, z = (int(v) for v in tag)
    except (TypeError, ValueError):
        raise UserError(f"{source}: {name} must hold three integers") from None
    if max(abs(x), abs(y), abs(z)) > MAX_COORD:
        raise UserError(f"{source}: {name} {x},{y},{z} is outside the world (at most {MAX_COORD:,} from 0)")
    return (x, y, z)


def _world_from_sponge(root: Any, source: str) -> World:
    nbt = _require("nbtlib")
    nested = root.get("Schematic")
    body = nested if isinstance(nested, nbt.Compound) and "Version" not in root else root
    if "Regions" in root and "MinecraftDataVersion" in root:
        raise UserError(f"{source} is not a Sponge schematic but a Litematica one; name it .litematic")
    if "Version" not in body:
        raise UserError(f"{source} is not a Sponge schematic (no Version tag)")
    version = _int(body["Version"], source, "Version")
    if version not in (1, 2, 3):
        raise UserError(f"{source}: Sponge schematic version {version} is not supported (1, 2 and 3 are)")
    try:
        width, height, length = (_int(body[key], source, key) & 0xFFFF for key in ("Width", "Height", "Length"))
    except KeyError as err:
        raise UserError(f"{source}: the schematic has no {err.args[0]}") from None
    _check_cells((width, height, length), source)
    offset = _vector(body["Offset"], source, "Offset") if "Offset" in body else (0, 0, 0)
    if version == 3:
        origin = (0, 0, 0)
        worldedit = body.get("Metadata", {}).get("WorldEdit", {})
        if "Origin" in worldedit:
            origin = _vector(worldedit["Origin"], source, "Metadata.WorldEdit.Origin")
        low = (offset[0] + origin[0], offset[1] + origin[1], offset[2] + origin[2])
        container = body.get("Blocks")
        if container is None:
            return World()
        palette_tag, data_tag = container.get("Palette"), container.get("Data")
        data_name = "Blocks.Data"
    else:
        low = offset
        palette_tag, data_tag = body.get("Palette"), body.get("BlockData")
        data_name = "BlockData"
    if palette_tag is None or data_tag is None:
        raise UserError(f"{source}: the schematic has no block palette or no {data_name}")
    palette = {_int(number, source, f"palette entry {state}"): str(state) for state, number in palette_tag.items()}
    try:
        indices = decode_varints(_unsigned_bytes(data_tag))
    except ValueError as err:
        raise UserError(f"{source}: {data_name} is damaged: {err}") from None
    volume = width * height * length
    if len(indices) != volume:
        raise UserError(
            f"{source}: {data_name} holds {len(indices)} blocks; a {width}x{height}x{length} box has {volume}"
        )
    missing = sorted(set(indices) - set(palette))
    if missing:
        raise UserError(f"{source}: {data_name} uses palette indices {missing} that the palette does not define")
    area = width * length

    def cells() -> Iterator[tuple[Pos, str]]:
        for number, state_index in enumerate(indices):
            y, rest = divmod(number, area)
            z, x = divmod(rest, width)
            yield (low[0] + x, low[1] + y, low[2] + z), palette[state_index]

    return _build_world(cells(), source)


def _world_from_litematic(root: Any, source: str) -> World:
    litemapy = _require("litemapy")
    if "Regions" not in root or "Metadata" not in root:
        raise UserError(f"{source} is not a Litematica schematic (no Regions or Metadata)")
    regions = root["Regions"] if isinstance(root["Regions"], dict) else {}
    for name, region in regions.items():
        size = region.get("Size") if isinstance(region, dict) else None
        if isinstance(size, dict):  # litemapy reports a missing or malformed size itself
            x, y, z = (_int(size.get(axis, 0), source, f"region {name} Size") for axis in "xyz")
            _check_cells((x, y, z), source)
    try:
        schematic = litemapy.Schematic.from_nbt(root)
    except Exception as err:  # litemapy raises KeyError, ValueError and its own errors on bad files
        raise UserError(f"{source}: cannot read the Litematica schematic ({type(err).__name__}: {err})") from None
    metadata = root["Metadata"]
    origin = _vector(metadata[ORIGIN_KEY], source, f"Metadata.{ORIGIN_KEY}") if ORIGIN_KEY in metadata else (0, 0, 0)

    def cells() -> Iterator[tuple[Pos, str]]:
        for _name, region in sorted(schematic.regions.items()):
            base = (origin[0] + region.x, origin[1] + region.y, origin[2] + region.z)
            for x in region.range_x():
                for y in region.range_y():
                    for z in region.range_z():
                        state = region[x, y, z]
                        text = state.id
                        props = sorted(state.properties())
                        if props:
                            text += "[" + ",".join(f"{k}={v}" for k, v in props) + "]"
                        yield (base[0] + x, base[1] + y, base[2] + z), text

    return _build_world(cells(), source)


def _build_world(cells: Iterable[tuple[Pos, str]], source: str) -> World:
    """A world from (position, block state) pairs; a UserError listing every block state that cannot be loaded."""
    known: dict[str, Block | None] = {}
    problems: dict[str, str] = {}
    where: dict[str, list[Pos]] = {}
    blocks: dict[Pos, Block] = {}
    for pos, state in cells:
        if state not in known and state not in problems:
            try:
                known[state] = parse_block_state(state)
            except UserError as err:
                problems[state] = str(err)
        if state in problems:
            where.setdefault(state, []).append(pos)
            continue
        block = known[state]
        if block is not None:  # air leaves the position as it is (Litematica regions may overlap)
            blocks[pos] = block
    check_extent(blocks, source)
    if where:
        entries = []
        for state, positions in sorted(where.items()):
            shown = ", ".join(f"({format_pos(p)})" for p in sorted(positions)[:POSITIONS_SHOWN])
            more = f" and {len(positions) - POSITIONS_SHOWN} more" if len(positions) > POSITIONS_SHOWN else ""
            entries.append(f"{state} at {shown}{more} ({problems[state]})")
        raise UserError(
            f"{source} has blocks the redstone simulator cannot load: {'; '.join(entries)}. "
            f"The redstone palette: {', '.join(sorted(PROPERTIES))}"
        )
    try:
        return World(blocks)
    except UserError as err:
        raise UserError(f"{source}: {err}") from None
