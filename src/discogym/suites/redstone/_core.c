/* The compiled core of the redstone engine: the dynamic rules of rules.py (scheduled ticks,
 * notifications, dust settling, repeaters, torches, lamps, buttons) on a world indexed by sorted position.
 *
 * rules.py is the reference; this file mirrors its functions one by one, with the same names, and the
 * differential tests run every circuit through both and compare the traces. Python computes the static
 * topology (neighbours, dust shapes, networks, who notifies whom) and hands it over as flat arrays; the
 * state arrays (on, power, locked) belong to Python and are changed here in place. It is loaded with
 * ctypes; the module init below only lets the build and the import system treat it as an extension.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { NORTH, EAST, SOUTH, WEST, UP, DOWN };
enum { K_AIR, K_WIRE, K_REPEATER, K_TORCH, K_WALL_TORCH, K_LAMP, K_BUTTON, K_STONE, K_GLASS, K_OTHER };

#define TORCH_DELAY 2
#define LAMP_OFF_DELAY 4
#define BUTTON_TICKS 20
#define BURNOUT_WINDOW 60
#define BURNOUT_TOGGLES 8
#define BURNOUT_RETRY 160

static const int OPPOSITE[6] = {SOUTH, WEST, NORTH, EAST, DOWN, UP};

typedef struct {
    int64_t due;
    int64_t order;
    int32_t priority;
    int32_t idx;
} Entry;

typedef struct {
    int64_t *data;
    int64_t len, cap;
} Ints;

typedef struct {
    int32_t n;
    /* static topology (owned by Python) */
    const int8_t *kind, *facing, *support, *points;
    const int16_t *delay;
    const int32_t *nbr; /* n x 6, -1 where there is no block */
    const int32_t *readers_start, *readers;
    const int32_t *net_of, *net_start, *net_members;
    const int32_t *around_start, *around;
    /* state (owned by Python) */
    int8_t *on, *power, *locked;
    /* state (owned here) */
    int8_t *pending, *running, *best;
    int64_t *settled_in, *seen;
    int64_t time, order, wave, stamp;
    int recording, failed;
    Entry *heap;
    int64_t heap_len, heap_cap;
    Ints toggle_time, toggle_idx; /* from toggle_head on */
    int64_t toggle_head;
    Ints scratch;                       /* a stack of position lists for nested notifications */
    Ints trace_tick, trace_idx, trace_codes; /* codes: before * 256 + after */
} Core;

/* ---------------------------------------------------------------------------------------------- */
/* Growable arrays */

static int ints_push(Core *c, Ints *a, int64_t value) {
    if (a->len == a->cap) {
        int64_t cap = a->cap ? 2 * a->cap : 64;
        int64_t *grown = realloc(a->data, (size_t)cap * sizeof(int64_t));
        if (!grown) {
            c->failed = 1;
            return 0;
        }
        a->data = grown;
        a->cap = cap;
    }
    a->data[a->len++] = value;
    return 1;
}

static int entry_less(const Entry *a, const Entry *b) {
    if (a->due != b->due) return a->due < b->due;
    if (a->priority != b->priority) return a->priority < b->priority;
    return a->order < b->order;
}

static void heap_push(Core *c, Entry e) {
    if (c->heap_len == c->heap_cap) {
        int64_t cap = c->heap_cap ? 2 * c->heap_cap : 64;
        Entry *grown = realloc(c->heap, (size_t)cap * sizeof(Entry));
        if (!grown) {
            c->failed = 1;
            return;
        }
        c->heap = grown;
        c->heap_cap = cap;
    }
    int64_t i = c->heap_len++;
    while (i > 0) {
        int64_t parent = (i - 1) / 2;
        if (!entry_less(&e, &c->heap[parent])) break;
        c->heap[i] = c->heap[parent];
        i = parent;
    }
    c->heap[i] = e;
}

static Entry heap_pop(Core *c) {
    Entry top = c->heap[0];
    Entry last = c->heap[--c->heap_len];
    int64_t i = 0, n = c->heap_len;
    for (;;) {
        int64_t child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && entry_less(&c->heap[child + 1], &c->heap[child])) child++;
        if (!entry_less(&c->heap[child], &last)) break;
        c->heap[i] = c->heap[child];
        i = child;
    }
    if (n > 0) c->heap[i] = last;
    return top;
}

/* ---------------------------------------------------------------------------------------------- */
/* Power */

static int is_component(int kind) {
    return kind == K_WIRE || kind == K_REPEATER || kind == K_TORCH || kind == K_WALL_TORCH || kind == K_LAMP ||
           kind == K_BUTTON;
}

static int has_on(int kind) {
    return kind == K_REPEATER || kind == K_TORCH || kind == K_WALL_TORCH || kind == K_LAMP || kind == K_BUTTON;
}

static int emitted(const Core *c, int32_t source, int towards, int strong, int for_dust) {
    int kind = c->kind[source];
    if (kind == K_WIRE) {
        if (for_dust) return 0;
        int power = c->power[source];
        if (power == 0 || towards == UP) return 0;
        return (towards == DOWN || (c->points[source] >> towards) & 1) ? power : 0;
    }
    if (!c->on[source]) return 0;
    switch (kind) {
    case K_REPEATER:
        return towards == OPPOSITE[c->facing[source]] ? 15 : 0;
    case K_TORCH:
    case K_WALL_TORCH:
        if (strong) return towards == UP ? 15 : 0;
        return towards == c->support[source] ? 0 : 15;
    case K_BUTTON:
        if (strong) return towards == c->support[source] ? 15 : 0;
        return 15;
    default:
        return 0;
    }
}

static int conductor_power(const Core *c, int32_t pos, int for_dust) {
    int best = 0;
    const int32_t *nbr = c->nbr + 6 * (int64_t)pos;
    for (int d = 0; d < 6; d++) {
        if (nbr[d] < 0) continue;
        int power = emitted(c, nbr[d], OPPOSITE[d], 1, for_dust);
        if (power > best) {
            if (power >= 15) return 15;
            best = power;
        }
    }
    return best;
}

static int signal_from(const Core *c, int32_t neighbour, int towards, int for_dust) {
    if (neighbour < 0) return 0;
    int kind = c->kind[neighbour];
    if (kind == K_GLASS || kind == K_AIR) return 0;
    if (kind == K_STONE || kind == K_LAMP) return conductor_power(c, neighbour, for_dust);
    return emitted(c, neighbour, towards, 0, for_dust);
}

static int has_neighbor_signal(const Core *c, int32_t pos) {
    const int32_t *nbr = c->nbr + 6 * (int64_t)pos;
    for (int d = 0; d < 6; d++)
        if (nbr[d] >= 0 && signal_from(c, nbr[d], OPPOSITE[d], 0) > 0) return 1;
    return 0;
}

static int torch_powered(const Core *c, int32_t pos) {
    int side = c->support[pos];
    return signal_from(c, c->nbr[6 * (int64_t)pos + side], OPPOSITE[side], 0) > 0;
}

static int repeater_input(const Core *c, int32_t pos) {
    int facing = c->facing[pos];
    int32_t back = c->nbr[6 * (int64_t)pos + facing];
    int signal = signal_from(c, back, OPPOSITE[facing], 0);
    if (signal < 15 && back >= 0 && c->kind[back] == K_WIRE && c->power[back] > signal) signal = c->power[back];
    return signal;
}

static int repeater_locked(const Core *c, int32_t pos) {
    int facing = c->facing[pos];
    int sides[2] = {(facing + 1) % 4, (facing + 3) % 4};
    for (int k = 0; k < 2; k++) {
        int32_t neighbour = c->nbr[6 * (int64_t)pos + sides[k]];
        if (neighbour >= 0 && c->kind[neighbour] == K_REPEATER && c->on[neighbour] &&
            c->facing[neighbour] == sides[k])
            return 1;
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* State changes and the schedule */

static int code(const Core *c, int32_t pos) {
    int kind = c->kind[pos];
    if (kind == K_WIRE) return c->power[pos];
    if (has_on(kind)) return c->on[pos] + 2 * c->locked[pos];
    return 0;
}

static void record(Core *c, int32_t pos, int before) {
    if (!c->recording) return;
    ints_push(c, &c->trace_tick, c->time);
    ints_push(c, &c->trace_idx, pos);
    ints_push(c, &c->trace_codes, before * 256 + code(c, pos));
}

static void schedule(Core *c, int32_t pos, int delay, int priority) {
    if (c->pending[pos]) return;
    c->order += 1;
    c->pending[pos] = 1;
    Entry e = {c->time + delay, c->order, priority, pos};
    heap_push(c, e);
}

static void notify_around(Core *c, int64_t first, int64_t count);

static void set_on(Core *c, int32_t pos, int value, int notify) {
    int before = code(c, pos);
    c->on[pos] = (int8_t)value;
    record(c, pos, before);
    if (notify) {
        c->wave += 1;
        int64_t at = c->scratch.len;
        ints_push(c, &c->scratch, pos);
        notify_around(c, at, 1);
        c->scratch.len = at;
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* Dust */

static int dust_source(const Core *c, int32_t pos) {
    int source = 0;
    const int32_t *nbr = c->nbr + 6 * (int64_t)pos;
    for (int d = 0; d < 6; d++) {
        if (nbr[d] < 0 || c->kind[nbr[d]] == K_WIRE) continue;
        int signal = signal_from(c, nbr[d], OPPOSITE[d], 1);
        if (signal > source) {
            if (signal >= 15) return 15;
            source = signal;
        }
    }
    return source;
}

/* Recompute a network's power; pushes the dust whose power changed onto the scratch stack. */
static void settle_dust(Core *c, int32_t start) {
    int32_t net = c->net_of[start];
    const int32_t *members = c->net_members + c->net_start[net];
    int32_t size = c->net_start[net + 1] - c->net_start[net];
    for (int32_t k = 0; k < size; k++) {
        c->settled_in[members[k]] = c->wave;
        c->best[members[k]] = (int8_t)dust_source(c, members[k]);
    }
    /* Spread power along the reading edges, strongest first: at each level every block at that level passes
     * level - 1 on to its readers, so a block's power is final when its level is taken. */
    for (int level = 15; level > 1 && size > 1; level--) {
        for (int32_t k = 0; k < size; k++) {
            int32_t pos = members[k];
            if (c->best[pos] != level) continue;
            for (int32_t r = c->readers_start[pos]; r < c->readers_start[pos + 1]; r++) {
                int32_t reader = c->readers[r];
                if (c->best[reader] < level - 1) c->best[reader] = (int8_t)(level - 1);
            }
        }
    }
    for (int32_t k = 0; k < size; k++) {
        int32_t pos = members[k];
        if (c->best[pos] != c->power[pos]) {
            int before = c->power[pos];
            c->power[pos] = c->best[pos];
            record(c, pos, before);
            ints_push(c, &c->scratch, pos);
        }
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* Notifications */

static void repeater_neighbor(Core *c, int32_t pos);

static void notify_one(Core *c, int32_t pos) {
    switch (c->kind[pos]) {
    case K_WIRE: {
        if (c->settled_in[pos] == c->wave) return; /* nothing feeding it changed since it was settled */
        int64_t at = c->scratch.len;
        settle_dust(c, pos);
        if (c->scratch.len > at) notify_around(c, at, c->scratch.len - at);
        c->scratch.len = at;
        break;
    }
    case K_REPEATER:
        repeater_neighbor(c, pos);
        break;
    case K_TORCH:
    case K_WALL_TORCH:
        if (c->on[pos] == torch_powered(c, pos) && !c->running[pos]) schedule(c, pos, TORCH_DELAY, 0);
        break;
    case K_LAMP: {
        int lit = c->on[pos], powered = has_neighbor_signal(c, pos);
        if (lit && !powered)
            schedule(c, pos, LAMP_OFF_DELAY, 0);
        else if (powered && !lit)
            set_on(c, pos, 1, 0); /* a lamp's light changes no power */
        break;
    }
    default:
        break;
    }
}

/* Notify the components around the positions scratch[first .. first + count), depth first, each once. */
static void notify_around(Core *c, int64_t first, int64_t count) {
    int64_t targets = c->scratch.len;
    c->stamp += 1;
    for (int64_t k = 0; k < count; k++) {
        int32_t centre = (int32_t)c->scratch.data[first + k];
        for (int32_t a = c->around_start[centre]; a < c->around_start[centre + 1]; a++) {
            int32_t target = c->around[a];
            if (count > 1) {
                if (c->seen[target] == c->stamp) continue;
                c->seen[target] = c->stamp;
            }
            ints_push(c, &c->scratch, target);
        }
    }
    int64_t end = c->scratch.len;
    for (int64_t k = targets; k < end && !c->failed; k++) notify_one(c, (int32_t)c->scratch.data[k]);
    c->scratch.len = targets;
}

static int repeater_priority(const Core *c, int32_t pos) {
    int facing = c->facing[pos];
    int32_t front = c->nbr[6 * (int64_t)pos + OPPOSITE[facing]];
    if (front >= 0 && c->kind[front] == K_REPEATER && c->facing[front] != OPPOSITE[facing]) return -3;
    return c->on[pos] ? -2 : -1;
}

static void repeater_neighbor(Core *c, int32_t pos) {
    int locked = repeater_locked(c, pos);
    if (locked != c->locked[pos]) {
        int before = code(c, pos);
        c->locked[pos] = (int8_t)locked;
        record(c, pos, before);
    }
    if (locked) return;
    int should = repeater_input(c, pos) > 0;
    if (c->on[pos] != should && !c->running[pos]) schedule(c, pos, c->delay[pos], repeater_priority(c, pos));
}

/* ---------------------------------------------------------------------------------------------- */
/* Scheduled ticks */

static int recent_toggles(const Core *c, int32_t pos) {
    int count = 0;
    for (int64_t k = c->toggle_head; k < c->toggle_idx.len; k++) count += c->toggle_idx.data[k] == pos;
    return count;
}

static void torch_tick(Core *c, int32_t pos) {
    int powered = torch_powered(c, pos);
    while (c->toggle_head < c->toggle_time.len && c->time - c->toggle_time.data[c->toggle_head] > BURNOUT_WINDOW)
        c->toggle_head++;
    if (c->toggle_head > 1024 && 2 * c->toggle_head > c->toggle_time.len) { /* compact the consumed front */
        int64_t keep = c->toggle_time.len - c->toggle_head;
        memmove(c->toggle_time.data, c->toggle_time.data + c->toggle_head, (size_t)keep * sizeof(int64_t));
        memmove(c->toggle_idx.data, c->toggle_idx.data + c->toggle_head, (size_t)keep * sizeof(int64_t));
        c->toggle_time.len = c->toggle_idx.len = keep;
        c->toggle_head = 0;
    }
    if (c->on[pos]) {
        if (powered) {
            set_on(c, pos, 0, 1);
            ints_push(c, &c->toggle_time, c->time);
            ints_push(c, &c->toggle_idx, pos);
            if (recent_toggles(c, pos) >= BURNOUT_TOGGLES) schedule(c, pos, BURNOUT_RETRY, 0);
        }
    } else if (!powered && recent_toggles(c, pos) < BURNOUT_TOGGLES) {
        set_on(c, pos, 1, 1);
    }
}

static void repeater_tick(Core *c, int32_t pos) {
    if (repeater_locked(c, pos)) return;
    int should = repeater_input(c, pos) > 0;
    if (c->on[pos] && !should) {
        set_on(c, pos, 0, 1);
    } else if (!c->on[pos]) {
        set_on(c, pos, 1, 1);
        if (!should) schedule(c, pos, c->delay[pos], -3);
    }
}

static void run_tick(Core *c, int32_t pos) {
    switch (c->kind[pos]) {
    case K_REPEATER:
        repeater_tick(c, pos);
        break;
    case K_TORCH:
    case K_WALL_TORCH:
        torch_tick(c, pos);
        break;
    case K_LAMP:
        if (c->on[pos] && !has_neighbor_signal(c, pos)) set_on(c, pos, 0, 0);
        break;
    case K_BUTTON:
        if (c->on[pos]) set_on(c, pos, 0, 1);
        break;
    default:
        break;
    }
}

static void step(Core *c) {
    c->time += 1;
    int64_t first = c->scratch.len;
    while (c->heap_len > 0 && c->heap[0].due <= c->time) {
        Entry e = heap_pop(c);
        c->pending[e.idx] = 0;
        c->running[e.idx] = 1;
        ints_push(c, &c->scratch, e.idx);
    }
    int64_t end = c->scratch.len;
    for (int64_t k = first; k < end && !c->failed; k++) {
        int32_t pos = (int32_t)c->scratch.data[k];
        c->running[pos] = 0;
        run_tick(c, pos);
    }
    for (int64_t k = first; k < end; k++) c->running[c->scratch.data[k]] = 0;
    c->scratch.len = first;
}

/* ---------------------------------------------------------------------------------------------- */
/* The interface for ctypes */

Core *rs_new(int32_t n, const int8_t *kind, const int32_t *nbr, const int8_t *facing, const int8_t *support,
             const int16_t *delay, const int8_t *points, const int32_t *readers_start, const int32_t *readers,
             const int32_t *net_of, const int32_t *net_start, const int32_t *net_members,
             const int32_t *around_start, const int32_t *around, int8_t *on, int8_t *power, int8_t *locked) {
    Core *c = calloc(1, sizeof(Core));
    if (!c) return NULL;
    size_t count = n > 0 ? (size_t)n : 1;
    c->n = n;
    c->kind = kind;
    c->nbr = nbr;
    c->facing = facing;
    c->support = support;
    c->delay = delay;
    c->points = points;
    c->readers_start = readers_start;
    c->readers = readers;
    c->net_of = net_of;
    c->net_start = net_start;
    c->net_members = net_members;
    c->around_start = around_start;
    c->around = around;
    c->on = on;
    c->power = power;
    c->locked = locked;
    c->pending = calloc(count, 1);
    c->running = calloc(count, 1);
    c->best = calloc(count, 1);
    c->settled_in = malloc(count * sizeof(int64_t));
    c->seen = calloc(count, sizeof(int64_t));
    if (!c->pending || !c->running || !c->best || !c->settled_in || !c->seen) c->failed = 1;
    for (int32_t i = 0; c->settled_in && i < n; i++) c->settled_in[i] = -1;
    return c;
}

void rs_free(Core *c) {
    if (!c) return;
    free(c->pending);
    free(c->running);
    free(c->best);
    free(c->settled_in);
    free(c->seen);
    free(c->heap);
    free(c->toggle_time.data);
    free(c->toggle_idx.data);
    free(c->scratch.data);
    free(c->trace_tick.data);
    free(c->trace_idx.data);
    free(c->trace_codes.data);
    free(c);
}

int rs_failed(const Core *c) { return c->failed; }
int64_t rs_time(const Core *c) { return c->time; }
int64_t rs_order(const Core *c) { return c->order; }
int64_t rs_queue_len(const Core *c) { return c->heap_len; }
int64_t rs_toggles_len(const Core *c) { return c->toggle_time.len - c->toggle_head; }
int64_t rs_trace_len(const Core *c) { return c->trace_tick.len; }
void rs_set_recording(Core *c, int recording) { c->recording = recording; }

/* Load the clock, the schedule counter, the pending ticks and the torch toggles of a running world. */
void rs_load(Core *c, int64_t time, int64_t order, int64_t queued, const int64_t *due, const int32_t *priority,
             const int64_t *entry_order, const int32_t *idx, int64_t toggles, const int64_t *toggle_time,
             const int32_t *toggle_idx) {
    c->time = time;
    c->order = order;
    for (int64_t k = 0; k < queued; k++) {
        Entry e = {due[k], entry_order[k], priority[k], idx[k]};
        heap_push(c, e);
        c->pending[idx[k]] = 1;
    }
    for (int64_t k = 0; k < toggles; k++) {
        ints_push(c, &c->toggle_time, toggle_time[k]);
        ints_push(c, &c->toggle_idx, toggle_idx[k]);
    }
}

void rs_export(const Core *c, int64_t *due, int32_t *priority, int64_t *entry_order, int32_t *idx,
               int64_t *toggle_time, int32_t *toggle_idx) {
    for (int64_t k = 0; k < c->heap_len; k++) {
        due[k] = c->heap[k].due;
        priority[k] = c->heap[k].priority;
        entry_order[k] = c->heap[k].order;
        idx[k] = c->heap[k].idx;
    }
    for (int64_t k = c->toggle_head; k < c->toggle_time.len; k++) {
        toggle_time[k - c->toggle_head] = c->toggle_time.data[k];
        toggle_idx[k - c->toggle_head] = (int32_t)c->toggle_idx.data[k];
    }
}

/* Move the recorded changes out: ticks, positions and codes (before * 256 + after). */
void rs_take_trace(Core *c, int64_t *tick, int32_t *idx, int32_t *codes) {
    for (int64_t k = 0; k < c->trace_tick.len; k++) {
        tick[k] = c->trace_tick.data[k];
        idx[k] = (int32_t)c->trace_idx.data[k];
        codes[k] = (int32_t)c->trace_codes.data[k];
    }
    c->trace_tick.len = c->trace_idx.len = c->trace_codes.len = 0;
}

void rs_notify_all(Core *c) {
    for (int32_t i = 0; i < c->n && !c->failed; i++) notify_one(c, i);
}

void rs_run(Core *c, int64_t ticks) {
    for (int64_t t = 0; t < ticks && !c->failed; t++) step(c);
}

/* Run until nothing is scheduled (at most ``limit`` ticks), then call that moment tick 0. */
void rs_settle(Core *c, int64_t limit) {
    for (int64_t t = 0; t < limit && c->heap_len > 0 && !c->failed; t++) step(c);
    int64_t shift = c->time;
    c->time = 0;
    for (int64_t k = 0; k < c->heap_len; k++) c->heap[k].due -= shift;
    for (int64_t k = c->toggle_head; k < c->toggle_time.len; k++) c->toggle_time.data[k] -= shift;
}

int rs_press(Core *c, int32_t pos) {
    if (c->on[pos]) return 0;
    set_on(c, pos, 1, 1);
    schedule(c, pos, BUTTON_TICKS, 0);
    return 1;
}

/* ---------------------------------------------------------------------------------------------- */

static struct PyModuleDef core_module = {PyModuleDef_HEAD_INIT, "_core",
                                         "The redstone engine's compiled core (used through ctypes).", -1, NULL};

PyMODINIT_FUNC PyInit__core(void) { return PyModule_Create(&core_module); }
