"""The static checks of a submission: its source, as written and as the compiler saw it
(preprocessed), its objects' symbols, and the device code its objects register (Python standard
library only). Everything here reads what the submission shaped, so every size is checked before
anything is read, and what cannot be read is a finding, never a hang."""

import os
import re
import shutil
import struct
import subprocess
import tempfile
import time
from pathlib import Path

import sandbox
from tools import run, tail

MAX_OBJECT_BYTES = 64 << 20        # an object of a 256 KiB source is far smaller
MAX_PREPROCESSED_BYTES = 64 << 20  # the same source with every header it includes
MAX_NM_BYTES = 16 << 20


def strip_comments(src, keep_strings):
    """C/C++ source with comments (and, unless keep_strings, string and character literals)
    replaced by spaces; newlines are kept, so line numbers stay right."""
    out = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        nxt = src[i + 1] if i + 1 < n else ""
        if c == "/" and nxt == "/":
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c == "/" and nxt == "*":
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c == "R" and nxt == '"' and not (i and (src[i - 1].isalnum() or src[i - 1] == "_")):
            m = re.match(r'R"([^()\\ ]{0,16})\(', src[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = src.find(")" + m.group(1) + '"', i)
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(src[i:j] if keep_strings else re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and (src[i - 1].isalnum()):  # a digit separator: 1'000
                out.append(c)
                i += 1
                continue
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(src[i:j] if keep_strings else c + " " * max(0, j - i - 2) + c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def source_findings(name, text, patterns, lines=None, deadline=None):
    """["file:line: message: excerpt"] for each pattern that matches the source. @p lines: the
    original line number of each line of @p text (preprocessed text), if not 1, 2, ... Every
    rule runs in linear time (its classes stay within a line; a "same_statement" rule is two
    regexes searched in each statement, the text between two of ';', '{', '}'); past
    @p deadline (time.monotonic()) it raises TimeoutError."""
    views = {"code": strip_comments(text, keep_strings=False),
             "code_and_strings": strip_comments(text, keep_strings=True)}
    raw_lines = text.splitlines()
    found, seen = [], set()
    statements = {}
    for p in patterns:
        if deadline is not None and time.monotonic() > deadline:
            raise TimeoutError("the static checks ran out of the submission's time")
        flags = re.MULTILINE | (re.IGNORECASE if "i" in p.get("flags", "") else 0)
        view = views[p.get("in", "code")]
        if "same_statement" in p:
            if p.get("in", "code") not in statements:
                statements[p.get("in", "code")] = [m.span() for m in re.finditer(r"[^;{}]+",
                                                                                  view)]
            other = re.compile(p["same_statement"], flags)
            first = re.compile(p["regex"], flags)
            matches = []
            for a, b in statements[p.get("in", "code")]:
                m = first.search(view, a, b)
                if m and other.search(view, a, b):
                    matches.append(m)
        else:
            matches = re.finditer(p["regex"], view, flags)
        for m in matches:
            start = m.start() + (len(m.group(0)) - len(m.group(0).lstrip()))
            index = view.count("\n", 0, start)
            line = lines[index] if lines and index < len(lines) else index + 1
            if (line, p["message"]) in seen:  # one finding per line and rule
                continue
            seen.add((line, p["message"]))
            excerpt = raw_lines[index].strip() if index < len(raw_lines) else ""
            found.append("%s:%d: %s: %s" % (name, line, p["message"], excerpt[:120]))
    return found


def line_marker_findings(name, text):
    """Any #line directive or GCC line marker in the source as written (comments removed,
    continued lines joined) is a finding: in the preprocessed text it would look like the
    compiler's own (INSTRUCTORS.md's threat model, "renames its own lines")."""
    found, start, logical = [], 1, ""
    for number, line in enumerate(strip_comments(text, keep_strings=True).split("\n"), 1):
        if not logical:
            start = number
        if line.endswith("\\"):
            logical += line[:-1]
            continue
        logical += line
        if LINE_MARKER.match(logical):
            found.append("%s:%d: a line marker (#line or `# N \"file\"`): the checks read the "
                         "source as the compiler saw it, file by file, so a submission may not "
                         "say where its lines come from; remove it" % (name, start))
        logical = ""
    return found


LINE_MARKER = re.compile(r"^\s*#\s*(line\b|\d)")


def preprocessed(ii_path, wanted):
    """What the compiler saw of the files @p wanted (resolved paths) in one preprocessed
    translation unit (nvcc --keep's .ii): {file: [(line, text)]}, [(file, line, path)] of
    every file those files included, and [(file, line, name)] of every place where one of those
    files renamed itself (a #line directive naming another file: a line marker without flags
    that leaves the file; what follows it would be checked as that file, or not at all). Macros
    are expanded, so a rule on this text sees through them."""
    size = os.path.getsize(ii_path)
    if size > MAX_PREPROCESSED_BYTES:
        raise ValueError("%s is %d bytes once preprocessed, more than the %d a check reads"
                         % (Path(ii_path).name, size, MAX_PREPROCESSED_BYTES))
    lines, included, renamed = {}, [], []
    current, number, previous = None, 0, None
    marker = re.compile(r'^# (\d+) "((?:[^"\\]|\\.)*)"((?: \d)*)\s*$')
    with open(ii_path, encoding="utf-8", errors="replace") as f:
        for text in f:
            m = marker.match(text)
            if m:
                path = m.group(2)
                path = path if path.startswith("<") else os.path.normpath(path)
                if " 1" in m.group(3) and current in wanted:
                    included.append((current, previous, path))
                elif not m.group(3) and current in wanted and path != current and \
                        not (path.startswith("<") and m.group(1) == "0"):
                    # (the compiler's own preamble, "# 0 "<built-in>"", is no renaming)
                    renamed.append((current, previous, path))
                current, number = path, int(m.group(1))
                continue
            if current in wanted:
                lines.setdefault(current, []).append((number, text.rstrip("\n")))
                previous = number
            number += 1
    return lines, included, renamed


# ---------------------------------------------------------------------------------------------
# Objects


def nm_symbols(obj):
    """[(type letter, raw name, demangled name, size)] of an object file or archive, from nm (in
    the order of the symbol table, so that the raw and the demangled listings line up)."""
    raw = run(["nm", "-p", "-S", str(obj)], timeout=60, limit=MAX_NM_BYTES + 1)
    dem = run(["nm", "-p", "-S", "-C", str(obj)], timeout=60, limit=MAX_NM_BYTES + 1)
    if raw.rc != 0 or dem.rc != 0 or raw.timed_out:
        raise ValueError("nm could not read %s: %s" % (Path(obj).name, tail(raw.output, 300)))
    if len(raw.output) > MAX_NM_BYTES:
        raise ValueError("%s has more symbols than a check reads" % Path(obj).name)
    rows = []
    for r, d in zip(raw.output.splitlines(), dem.output.splitlines()):
        # "U name", "addr T name" or "addr size T name"; raw (mangled) names have no spaces.
        fields = r.split()
        if len(fields) < 2 or r.endswith(":"):
            continue
        demangled = d.split(None, len(fields) - 1)[-1].strip()
        size = int(fields[1], 16) if len(fields) == 4 else 0
        rows.append((fields[-2], fields[-1], demangled, size))
    return rows


# C-linkage names the CUDA compiler itself defines in every object.
_GENERATED = re.compile(r"^(DW\.ref\.|__cuda|__nv|__fatbin|__device_stub|_GLOBAL__|__sti__)")
# Every kind of definition the linker may prefer over a library's: strong, common, weak, unique,
# indirect (ifunc) and absolute symbols. (Lowercase letters are local, "U", "w" and "v" undefined.)
_DEFINES = set("TDBRGSCWViuA")


def own_names_findings(obj_name, symbols, exercise_ns, exports):
    """Definitions that could replace code the submission is linked with: any C-linkage name
    (the C library, the CUDA runtime), anything of the course's or the grader's namespaces,
    operator new, a strong definition in std::, and any name the C++ runtime libraries export
    (@p exports; a weak definition would interpose theirs). The grader's own objects come first
    in the worker's link, so a weak definition of one of their names cannot displace theirs."""
    found = []
    for kind, raw, name, _ in symbols:
        if kind not in _DEFINES or _GENERATED.match(raw):
            continue
        if not raw.startswith("_Z"):
            found.append("%s: defines the C-linkage name '%s' (a %s symbol); define your code "
                         "inside namespace %s" % (obj_name, raw, kind, exercise_ns))
        elif re.search(r"(^|::)(course|testing|exercise|grader\w*|__gnu_cxx)::|"
                       r"^operator (new|delete)", name) or (kind not in "WVu" and name.startswith("std::")):
            found.append("%s: defines '%s', a name that belongs to the course, the grader or the "
                         "C++ library" % (obj_name, name))
        elif raw in exports:
            found.append("%s: defines '%s', which the C++ runtime library exports: it would "
                         "replace the library's code in the whole worker" % (obj_name, name))
    return found


def symbol_findings(obj_name, symbols, rules):
    found = []
    for kind, raw, name, _ in symbols:
        if kind not in "Uwv":
            continue
        for rule in rules:
            if re.search(rule["regex"], raw) or re.search(rule["regex"], name):
                found.append("%s: %s ('%s')" % (obj_name, rule["message"], name))
                break
    return found


def static_size_findings(obj_name, symbols, limit):
    found = []
    for kind, raw, name, size in symbols:
        if kind.upper() in "BDC" and size >= limit and not _GENERATED.match(raw):
            found.append("%s: reserves %d bytes of static memory ('%s'); an in-place transpose "
                         "may use shared memory only" % (obj_name, size, name))
    return found


def device_call_findings(obj_name, data, names):
    """Device code that calls malloc leaves the name in the object's embedded device code."""
    return ["%s: device code calls %s: in place means no second buffer" % (obj_name, n)
            for n in names if (b"\0" + n.encode() + b"\0") in data]


# ---------------------------------------------------------------------------------------------
# Device code: the fat binaries an object registers with the CUDA runtime, and the shared memory
# of each kernel in them. A bounded reader: every size is checked against what holds it.

SHT_RELA, SHT_NOBITS = 4, 8
FATBIN_WRAPPER_MAGIC, FATBIN_MAGIC = 0x466243B1, 0xBA55ED50


def elf_sections(data):
    """[(name, type, offset, size, link, info)] of a little-endian ELF64 file; ValueError for
    anything that does not fit in it."""
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a little-endian ELF64 file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    if shentsize != 64 or shnum > 65280 or shoff + shnum * 64 > len(data) or shstrndx >= shnum:
        raise ValueError("bad section table")
    raw = [struct.unpack_from("<IIQQQQII", data, shoff + i * 64) for i in range(shnum)]
    for _, typ, _, _, off, size, _, _ in raw:
        if typ != SHT_NOBITS and off + size > len(data):
            raise ValueError("a section runs past the end of the file")
    names = data[raw[shstrndx][4]:raw[shstrndx][4] + raw[shstrndx][5]]
    out = []
    for name, typ, _, _, off, size, link, info in raw:
        if name >= max(1, len(names)) and name:
            raise ValueError("a section name outside the name table")
        end = names.find(b"\0", name)
        out.append((names[name:end if end >= 0 else None].decode("ascii", "replace"), typ, off,
                    size, link, info))
    return out


def registered_fatbins(obj):
    """(offset in .nv_fatbin, .nv_fatbin bytes) of every fat binary that an object's host code
    registers: the data pointer of each wrapper in .nvFatBinSegment, read from its relocation.
    Bytes placed in .nv_fatbin by other means (a top-level asm) are not registered, so not read."""
    sections = elf_sections(obj)
    index = {s[0]: i for i, s in enumerate(sections)}
    if ".nvFatBinSegment" not in index:
        return []
    seg = index[".nvFatBinSegment"]
    if ".nv_fatbin" not in index:
        raise ValueError("fat binary wrappers without a .nv_fatbin section")
    fat = index[".nv_fatbin"]
    fat_bytes = obj[sections[fat][2]:sections[fat][2] + sections[fat][3]]
    seg_bytes = obj[sections[seg][2]:sections[seg][2] + sections[seg][3]]
    found = []
    for name, typ, off, size, link, info in sections:
        if typ != SHT_RELA or info != seg:
            continue
        if size % 24 or link >= len(sections):
            raise ValueError("bad relocations of the fat binary wrappers")
        sym_off, sym_size = sections[link][2], sections[link][3]
        for k in range(size // 24):
            r_offset, r_info, addend = struct.unpack_from("<QQq", obj, off + 24 * k)
            if r_offset % 24 != 8:  # the data pointer of a 24-byte wrapper
                continue
            if r_offset + 16 > len(seg_bytes) or struct.unpack_from(
                    "<I", seg_bytes, r_offset - 8)[0] != FATBIN_WRAPPER_MAGIC:
                raise ValueError("a fat binary wrapper without its magic number")
            sym = r_info >> 32
            if (sym + 1) * 24 > sym_size:
                raise ValueError("a relocation names a symbol outside the symbol table")
            _, _, _, shndx, value, _ = struct.unpack_from("<IBBHQQ", obj, sym_off + 24 * sym)
            if shndx != fat:
                raise ValueError("a registered fat binary outside .nv_fatbin")
            found.append((value + addend, fat_bytes))
    if not found:
        raise ValueError("no fat binary wrapper points into .nv_fatbin")
    return found


def fatbin_images(blob, start):
    """[(arch, cubin bytes or None when compressed)] of the fat binary at @p start of @p blob."""
    if start < 0 or start + 16 > len(blob):
        raise ValueError("the registered fat binary starts outside .nv_fatbin")
    magic, _, hsize, fsize = struct.unpack_from("<IHHQ", blob, start)
    end = start + hsize + fsize
    if magic != FATBIN_MAGIC or hsize < 16 or fsize == 0 or end > len(blob):
        raise ValueError("the registered fat binary's header does not fit its section")
    images, q = [], start + hsize
    while q < end:
        if q + 64 > end:
            raise ValueError("a fat binary entry's header runs past the fat binary")
        kind, _, ehsize, psize = struct.unpack_from("<HHIQ", blob, q)
        arch, = struct.unpack_from("<I", blob, q + 28)
        if ehsize < 64 or psize == 0 or q + ehsize + psize > end or kind not in (1, 2, 8, 16):
            raise ValueError("a fat binary entry that does not fit (kind %d, %d + %d bytes)"
                             % (kind, ehsize, psize))
        payload = blob[q + ehsize:q + ehsize + psize]
        if kind == 2:  # a cubin (1 is PTX, 8 and 16 LTO intermediate code)
            images.append((arch, payload if payload[:4] == b"\x7fELF" else None))
        q += ehsize + psize
    return images


def kernel_shared_bytes(cubin):
    """{mangled kernel name: bytes of its .nv.shared section} of a cubin (static shared memory,
    plus what the architecture reserves: see CheckMixin.reserved_shared). Kernels are the
    functions with a .nv.info section (device functions have none)."""
    sections = elf_sections(cubin)
    kernels = {n[len(".nv.info."):] for n, _, _, _, _, _ in sections if n.startswith(".nv.info.")}
    shared = {n[len(".nv.shared."):]: s for n, _, _, s, _, _ in sections
              if n.startswith(".nv.shared.")}
    return {k: shared.get(k, 0) for k in kernels}


def demangle(names):
    tool = shutil.which("c++filt")
    if not tool or not names:
        return {n: n for n in names}
    r = subprocess.run([tool], input="\n".join(names), capture_output=True, text=True)
    out = r.stdout.splitlines()
    return {n: (out[i] if i < len(out) else n) for i, n in enumerate(names)}



# ---------------------------------------------------------------------------------------------
# The checks of one exercise (a part of grade.Grader)


class CheckMixin:
    """Static checks and the static part of exercise 2's technique check."""

    def objects_of(self, ex):
        listing = self.build / "exercises" / (ex["objects"] + ".objects")
        return [Path(o) for o in listing.read_text().split()]

    def library_exports(self):
        """The names libstdc++ and libgcc_s export: a definition of one of them in the
        submission would replace the library's for every caller in the worker (interposition)."""
        if self._exports is None:
            self._exports = set()
            cxx = os.environ.get("CXX") or shutil.which("c++") or "c++"
            for lib in ("libstdc++.so", "libgcc_s.so.1"):
                path = run([cxx, "-print-file-name=" + lib], timeout=60).output.strip()
                if path and os.path.isfile(path):
                    r = run(["nm", "-D", "--defined-only", path], timeout=60, limit=64 << 20)
                    self._exports |= {l.split()[-1].split("@")[0] for l in r.output.splitlines()
                                      if len(l.split()) >= 3}
        return self._exports

    def preprocessed_sources(self, ex, files):
        """({file name: (text, [original line numbers])}, [(file, line, included path)]) of the
        submission's files as the compiler saw them, host and device passes (nvcc --keep)."""
        keep = self.build / "exercises" / "keep" / ex["objects"]
        folder = os.path.normpath(self.course_root / "exercises" / ex["id"])
        wanted = {os.path.join(folder, name): name for name in files}
        merged, included, renamed = {}, [], []
        for ii in sorted(keep.glob("*.ii")) if keep.is_dir() else []:
            lines, inc, ren = preprocessed(ii, set(wanted))
            for path, rows in lines.items():
                merged.setdefault(wanted[path], set()).update(rows)
            included += [(wanted[f], line, path) for f, line, path in inc]
            renamed += [(wanted[f], line, path) for f, line, path in ren]
        if renamed:
            raise ValueError("; ".join(dict.fromkeys(
                "%s:%s: a #line directive names another file (%s): the checks read the source "
                "as the compiler saw it, file by file, so a submission may not rename its lines"
                % (f, line or 1, path)
                for f, line, path in renamed)))
        if not merged:
            raise ValueError("nothing of %s is in the preprocessed sources (the grader's build "
                             "adds nvcc --keep)" % ", ".join(sorted(files)))
        texts = {}
        for name, rows in merged.items():
            rows = sorted(rows)
            texts[name] = ("\n".join(t for _, t in rows), [n for n, _ in rows])
        return texts, included

    def include_findings(self, ex, included):
        folder = os.path.normpath(self.course_root / "exercises" / ex["id"]) + "/"
        roots = [r + "/" for r in sandbox.SYSTEM + sandbox.tool_roots()]
        found = []
        for name, line, path in included:
            if path.startswith("<") or path.startswith(folder) or path.startswith(tuple(roots)):
                continue
            found.append("%s:%s: includes %s, from outside the exercise folder" % (
                name, line or "?", path))  # shown relative to the course (static_checks)
        return found

    def static_checks(self, ex, files):
        """The findings of the static checks, with paths relative to the course (a finding
        shows no folder of the grader's machine)."""
        marks = []
        for name, (_, data) in files.items():
            marks += line_marker_findings(name, data.decode("utf-8", errors="replace"))
        found = marks + self.static_findings(ex, files)
        prefixes = sorted({str(p) + "/" for p in (self.course_root, self.build, self.stage)
                           if p}, key=len, reverse=True)
        for p in prefixes:
            found = [f.replace(p, "") for f in found]
        return list(dict.fromkeys(found))

    def static_findings(self, ex, files):
        findings = []
        objects = self.objects_of(ex)
        ns = "ex" + ex["id"][:2]
        symbols, blobs = {}, {}
        try:
            for o in objects:
                if o.stat().st_size > MAX_OBJECT_BYTES:
                    raise ValueError("%s is over %d bytes" % (o.name, MAX_OBJECT_BYTES))
                symbols[o.name] = nm_symbols(o)
                blobs[o.name] = o.read_bytes()
            texts, included = self.preprocessed_sources(ex, files)
        except ValueError as err:
            return ["the compiled code could not be checked: %s" % err]
        findings += self.include_findings(ex, included)
        exports = self.library_exports()
        for check in ex["checks"]:
            if check == "own_names":
                for o, syms in symbols.items():
                    findings += own_names_findings(o, syms, ns, exports)
                continue
            rules = self.m["checks"][check]
            source = rules.get("source", [])
            for name, (_, data) in files.items():
                try:
                    findings += source_findings(name, data.decode("utf-8", errors="replace"),
                                                source, deadline=self.deadline)
                    if name in texts:
                        text, lines = texts[name]
                        findings += source_findings("%s (as compiled)" % name, text,
                                                    [p for p in source if p.get("in") == "code"],
                                                    lines, deadline=self.deadline)
                except TimeoutError as err:
                    return findings + ["%s: %s (%g s)" % (name, err,
                                                         self.timeouts["submission"])]
            for o, syms in symbols.items():
                findings += symbol_findings(o, syms, rules.get("undefined_symbols", []))
                if "max_static_bytes" in rules:
                    findings += static_size_findings(o, syms, rules["max_static_bytes"])
                if rules.get("device_calls"):
                    findings += device_call_findings(o, blobs[o], rules["device_calls"])
        return list(dict.fromkeys(findings))  # once each, in order

    def kernels_static(self, ex):
        """[(demangled kernel, bytes of static shared memory, arch)] of every kernel the
        submission's objects register; ValueError when the device code cannot be read."""
        seen = []
        for o in self.objects_of(ex):
            if o.stat().st_size > MAX_OBJECT_BYTES:
                raise ValueError("%s is over %d bytes" % (o.name, MAX_OBJECT_BYTES))
            for start, blob in registered_fatbins(o.read_bytes()):
                for arch, cubin in fatbin_images(blob, start):
                    if cubin is None:
                        raise ValueError("the device code of %s is compressed (the grader "
                                         "builds with nvcc --no-compress)" % o.name)
                    base = self.reserved_shared(arch)
                    for k, size in kernel_shared_bytes(cubin).items():
                        seen.append((k, max(0, size - base) if size else 0, arch))
        self.static_kernels = {k: b for k, b, _ in seen}  # mangled names, for the launches
        names = demangle(sorted({k for k, _, _ in seen}))
        return [(names[k], b, a) for k, b, a in seen]

    def shared_memory_static(self, ex, want):
        """(passed, text): the kernels the submission registers declare the tile: at least one
        exactly @p want bytes of static shared memory, and every kernel that declares any,
        exactly that (a padded or a second tile fails). A kernel with no shared memory at all
        (a helper: a fill, a naive kernel kept for comparison) is allowed here; on a GPU, every
        kernel the launcher launched must have the tile (RunMixin.shared_memory)."""
        try:
            seen = self.kernels_static(ex)
        except (ValueError, struct.error, OSError) as err:
            return False, "the compiled device code could not be read: %s" % err
        if not seen:
            return False, "no kernel found in the compiled device code"
        lines = ["%s: %d bytes of static shared memory (sm_%d)" % s for s in seen]
        if any(b == want for _, b, _ in seen) and all(b in (0, want) for _, b, _ in seen):
            return True, "; ".join(lines)
        hint = ""
        if any(b == want + 128 for _, b, _ in seen):
            hint = "\nA 32 x 33 tile (4224 bytes) is the padding of step 03, not a swizzle."
        return False, ("the kernel must use one unpadded 32 x 32 float tile, %d bytes of shared "
                       "memory (other kernels none); the compiled kernels use:\n%s%s" % (
                           want, "\n".join(lines), hint))

    def reserved_shared(self, arch):
        """Bytes of shared memory an architecture adds to the section of every kernel that uses
        any (1 KiB from sm_90 on): learned from a kernel with exactly 4 bytes, compiled here."""
        if arch in self.reserved:
            return self.reserved[arch]
        self.reserved[arch] = 0
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "probe.cu"
            src.write_text("__global__ void grader_probe(float* p) {\n"
                           "  __shared__ float s[1];\n  s[0] = p[0];\n  __syncthreads();\n"
                           "  p[1] = s[0];\n}\n")
            run([self.nvcc(), "-cubin", "-arch=sm_%d" % arch, src, "-o",
                 Path(tmp) / "probe.cubin"], timeout=120)
            try:
                sizes = kernel_shared_bytes((Path(tmp) / "probe.cubin").read_bytes())
                if sizes:
                    self.reserved[arch] = max(0, max(sizes.values()) - 4)
            except (OSError, ValueError, struct.error):
                pass
        return self.reserved[arch]
