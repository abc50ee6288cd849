"""How numbers and shapes are written in the tables, the num markers and the figures' labels, and
the Markdown table itself. Standard library only."""

import math
import re


def fmt_shape(shape, batch=1, type_=None):
    text = f"{shape[0]}x{shape[1]}"
    if batch != 1:
        text += f", batch {batch}"
    if type_:
        text += f" {type_}"
    return text


def fmt_ms(ms):
    """About three significant digits, without scientific notation."""
    if ms >= 100:
        return f"{ms:.0f}"
    if ms >= 10:
        return f"{ms:.1f}"
    if ms >= 1:
        return f"{ms:.2f}"
    return f"{ms:.3g}" if ms >= 0.001 else f"{ms:.4f}"


def fmt_value(v):
    """A profiler value as the profile tables print it."""
    if v == int(v) or abs(v) >= 1000:
        return f"{v:,.0f}"
    if abs(v) >= 100:
        return f"{v:.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def fmt_sig(v, digits):
    """v to `digits` significant digits, trailing zeros kept, never in scientific notation:
    fmt_sig(0.189792, 3) == "0.190", fmt_sig(10.4, 2) == "10", fmt_sig(123, 2) == "120"."""
    if v == 0 or not math.isfinite(v):
        return f"{v:.{max(digits - 1, 0)}f}" if v == 0 else str(v)
    exponent = math.floor(math.log10(abs(v)))
    decimals = digits - 1 - exponent
    rounded = round(v, decimals)
    if rounded and math.floor(math.log10(abs(rounded))) > exponent:  # 9.96 -> 10.0
        decimals -= 1
    return f"{round(v, decimals):.{max(decimals, 0)}f}"


def fmt_fixed(v, decimals):
    text = f"{v:.{decimals}f}"
    return text[1:] if re.fullmatch(r"-0(\.0*)?", text) else text  # no "-0.0"


def fmt_bytes(n):
    return f"{n / 1e9:.3g} GB" if n >= 1e9 else f"{n / 1e6:.3g} MB"


def cell(text):
    """Escapes what would break a Markdown table cell or read as an HTML tag."""
    return (str(text).replace("\\", "\\\\").replace("|", "\\|")
            .replace("<", "&lt;").replace(">", "&gt;"))


# Left-aligned columns; numbers are right-aligned.
TEXT_COLUMNS = ("step", "kernel", "shape", "idea", "pattern")


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join(":---" if i == 0 or h in TEXT_COLUMNS else "---:"
                            for i, h in enumerate(header)) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def some(names, most=6):
    """'a; b; c' for a short list, 'a; b; ... and 9 more' for a long one."""
    if len(names) <= most:
        return "; ".join(names)
    return "; ".join(names[:most]) + f"; ... and {len(names) - most} more"
