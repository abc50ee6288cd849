"""The bank maps: the shared-memory bank of every element of a plain, a padded and a swizzled
32 x 32 tile (plots/data/bankmap.csv, the CPU model of common/bank_model.hpp), one figure with the
three side by side and one per layout."""

import math

from plotting import save, subplots

LAYOUT_TITLES = {"plain": "plain: float tile[32][32]",
                 "padded": "padded: float tile[32][33]",
                 "swizzled": "swizzled: tile[r][c ^ r]"}


def column_degree(cells, col=0):
    """A warp reading column `col`: the most distinct words any one bank is asked for."""
    words_per_bank = {}
    for (r, c), (word, bank) in cells.items():
        if c == col and r < 32:
            words_per_bank.setdefault(bank, set()).add(word)
    return max((len(w) for w in words_per_bank.values()), default=0)


BANKS = 32


def bank_colormap():
    """32 pale colours, one per bank: a rainbow that does not wrap (bank 0 blue, bank 31 red, so
    banks 0 and 31 never look alike), with even banks paler than odd ones, so that two
    neighbouring banks differ in lightness as well as in hue. The numbers in the cells say
    the rest."""
    import matplotlib
    from matplotlib.colors import ListedColormap
    rainbow = matplotlib.colormaps["turbo"]
    colors = []
    for bank in range(BANKS):
        r, g, b, _ = rainbow(0.08 + 0.84 * bank / (BANKS - 1))
        white = 0.62 if bank % 2 == 0 else 0.28  # the share of white mixed in
        colors.append(tuple(c + (1 - c) * white for c in (r, g, b)))
    return ListedColormap(colors, name="banks")


def draw_bank_panel(ax, layout, cells, every_number=True):
    import matplotlib
    n_rows = 1 + max(r for r, _ in cells)
    n_cols = 1 + max(c for _, c in cells)
    grid = [[math.nan] * n_cols for _ in range(n_rows)]
    for (r, c), (_, bank) in cells.items():
        grid[r][c] = bank
    ax.imshow(grid, cmap=bank_colormap(), vmin=-0.5, vmax=BANKS - 0.5, interpolation="nearest")
    # Thin white lines between the cells.
    ax.set_xticks([c - 0.5 for c in range(1, n_cols)], minor=True)
    ax.set_yticks([r - 0.5 for r in range(1, n_rows)], minor=True)
    ax.grid(which="minor", color="white", linewidth=0.5)
    ax.tick_params(which="minor", length=0)
    small = max(n_rows, n_cols) > 16
    for (r, c), (_, bank) in cells.items():
        if every_number or c == 0:  # else only the column the warp reads
            ax.text(c, r, str(bank), ha="center", va="center",
                    fontsize=8 if not small else 5 if every_number else 6.5)
    # The column a warp reads in the transpose's second half: thread t reads (t, 0).
    ax.add_patch(matplotlib.patches.Rectangle((-0.5, -0.5), 1, min(n_rows, 32), fill=False,
                                              edgecolor="black", linewidth=2.5))
    degree = column_degree(cells)
    ways = "no conflict" if degree == 1 else f"{degree}-way conflict"
    ax.set_title(f"{LAYOUT_TITLES.get(layout, layout)}\ncolumn 0 read by a warp: {ways}",
                 fontsize=10)
    ax.set_xlabel("column")
    ax.set_ylabel("row")
    ax.grid(which="major", visible=False)
    ticks = list(range(0, max(n_rows, n_cols), 4))
    ax.set_xticks([t for t in ticks if t < n_cols])
    ax.set_yticks([t for t in ticks if t < n_rows])


def layout_order(maps):
    known = [name for name in LAYOUT_TITLES if name in maps]
    return known + sorted(set(maps) - set(known))


def draw_bankmap(maps, layout, path):
    fig, ax = subplots(figsize=(7, 7.4))
    draw_bank_panel(ax, layout, maps[layout])
    fig.suptitle("Shared-memory bank of each tile element (4-byte words, 32 banks)",
                 fontsize=11)
    save(fig, path, [], rect=None)


def draw_bankmaps(maps, path):
    layouts = layout_order(maps)
    fig, axes = subplots(1, len(layouts), figsize=(6.5 * len(layouts), 7), squeeze=False)
    for ax, layout in zip(axes[0], layouts):
        draw_bank_panel(ax, layout, maps[layout], every_number=False)
    fig.suptitle("Shared-memory bank of each tile element; the outlined column is what one warp "
                 "reads", fontsize=12)
    save(fig, path, [], rect=None)


def figures(data):
    """(name, caption, rows, draw) for the three-panel figure and one per layout."""
    maps = data.bankmaps
    out = [("bankmaps", "Bank of each element: plain, padded and swizzled tiles",
            data.bankmap_rows if maps else [], lambda path: draw_bankmaps(maps, path))]
    for layout in sorted(set(maps) | set(LAYOUT_TITLES)):
        rows = [r for r in data.bankmap_rows if r.get("layout") == layout] if layout in maps else []
        out.append((f"bankmap_{layout}", f"Bank of each element of the {layout} tile", rows,
                    lambda path, layout=layout: draw_bankmap(maps, layout, path)))
    return out
