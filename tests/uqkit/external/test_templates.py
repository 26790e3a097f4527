"""Deck templates: what renders, what is copied, and what is refused before any run."""
import numpy as np
import pytest

from uqkit.external import DeckTemplate, ExternalModel, Regex, TemplateError

TCL_DECK = """\
# OpenSees-style Tcl: braces and percent signs of the deck's own syntax
proc area {b h} { return [expr {$b * $h}] }
foreach {tag x} {1 0.0 2 1.0} { node $tag $x 0.0 }
puts [format "%.3f" [area 2 3]]   ;# 100% plain text
set E {{ "%.8e" | format(E) }}
"""


def test_braces_and_percent_signs_of_the_deck_render_unchanged(tmp_path):
    (tmp_path / "model.tcl").write_text(TCL_DECK)
    deck = DeckTemplate(tmp_path / "model.tcl")
    run = tmp_path / "run"
    run.mkdir()
    deck.render_into(run, {"E": 210000.123456789})
    expected = TCL_DECK.replace('{{ "%.8e" | format(E) }}', "2.10000123e+05")
    assert (run / "model.tcl").read_text() == expected


def test_loops_and_conditionals_write_repeated_blocks(tmp_path):
    (tmp_path / "deck.inp").write_text(
        "*NODE\n{% for i in range(n) %}\n{{ i + 1 }}, {{ i * L / (n - 1) }}\n{% endfor %}\n"
        "{% if P > 0 %}\n*CLOAD\n{% endif %}\n*END\n")
    deck = DeckTemplate(tmp_path / "deck.inp")
    run = tmp_path / "run"
    run.mkdir()
    deck.render_into(run, {"n": 3, "L": 2.0, "P": 1.0})
    assert (run / "deck.inp").read_text() == "*NODE\n1, 0.0\n2, 1.0\n3, 2.0\n*CLOAD\n*END\n"
    deck.render_into(run, {"n": 2, "L": 1.0, "P": -1.0})
    assert (run / "deck.inp").read_text() == "*NODE\n1, 0.0\n2, 1.0\n*END\n"


def test_a_directory_renders_templates_and_copies_other_files_unchanged(tmp_path):
    src = tmp_path / "tpl"
    (src / "mesh").mkdir(parents=True)
    (src / "main.inp").write_text("*INCLUDE, INPUT=mesh/nodes.inp\nE = {{ E }}\n")
    # a mesh that happens to hold Jinja-looking text is still copied when render= says so
    (src / "mesh" / "nodes.inp").write_text("1, 0, 0 ** {{ not a placeholder }}\n")
    blob = bytes(range(256)) * 4
    (src / "mesh" / "table.bin").write_bytes(blob)
    with pytest.raises(TemplateError, match="mesh/nodes.inp, line 1"):  # *.inp matches it
        DeckTemplate(src, render=["*.inp"])
    deck = DeckTemplate(src, render=["main.inp"])
    assert sorted(deck.statics) == ["mesh/nodes.inp", "mesh/table.bin"]
    run = tmp_path / "run"
    run.mkdir()
    deck.render_into(run, {"E": 7.0})
    assert (run / "main.inp").read_text().endswith("E = 7.0\n")
    assert (run / "mesh" / "nodes.inp").read_text() == "1, 0, 0 ** {{ not a placeholder }}\n"
    assert (run / "mesh" / "table.bin").read_bytes() == blob


def test_without_render_patterns_only_files_that_use_the_syntax_are_templates(tmp_path):
    (tmp_path / "deck.inp").write_text("E = {{ E }}\n")
    (tmp_path / "plain.inp").write_text("*STEP {with braces} 50%\n")
    (tmp_path / "bin.dat").write_bytes(b"\xff\xfe\x00{{")
    deck = DeckTemplate(tmp_path)
    assert list(deck.sources) == ["deck.inp"]
    assert sorted(deck.statics) == ["bin.dat", "plain.inp"]


def test_an_undefined_placeholder_is_refused_before_any_run_naming_file_and_line(tmp_path):
    (tmp_path / "deck.inp").write_text("*ELASTIC\n{{ E }}, {{ nu }}\n*STEP\n{{ thickness }}\n")
    marker = tmp_path / "ran"
    with pytest.raises(TemplateError, match=r"deck.inp, line 4: .*'thickness'"):
        ExternalModel(tmp_path, ["touch", str(marker)], outputs={"y": Regex("(.*)")},
                      input_names=["E"], constants={"nu": 0.3})
    assert not marker.exists()


def test_an_input_no_template_uses_is_refused(tmp_path):
    (tmp_path / "deck.inp").write_text("{{ E }}\n")
    with pytest.raises(TemplateError, match=r"\['h'\] are used by no template file"):
        ExternalModel(tmp_path, ["true"], outputs={"y": Regex("(.*)")}, input_names=["E", "h"])
    # an input used only on the command line is used
    ExternalModel(tmp_path, ["echo", "{{ h }}"], outputs={"y": Regex("(.*)")},
                  input_names=["E", "h"])


def test_a_syntax_error_names_the_file_and_line(tmp_path):
    (tmp_path / "deck.inp").write_text("ok\n{% for i in %}\n")
    with pytest.raises(TemplateError, match=r"deck.inp, line 2: .*delimiters"):
        DeckTemplate(tmp_path)


def test_other_delimiters_for_decks_that_use_jinja_syntax_themselves(tmp_path):
    (tmp_path / "deck.txt").write_text("{{literal}} {% also %} << E >>\n")
    deck = DeckTemplate(tmp_path / "deck.txt", options={
        "variable_start_string": "<<", "variable_end_string": ">>",
        "block_start_string": "<%", "block_end_string": "%>"})
    assert set(deck.variables) == {"E"}
    run = tmp_path / "run"
    run.mkdir()
    deck.render_into(run, {"E": 3})
    assert (run / "deck.txt").read_text() == "{{literal}} {% also %} 3\n"


def test_missing_template_and_unmatched_render_pattern_are_refused(tmp_path):
    with pytest.raises(TemplateError, match="no template"):
        DeckTemplate(tmp_path / "nope.inp")
    (tmp_path / "a.inp").write_text("{{ x }}")
    with pytest.raises(TemplateError, match=r"\['\*.dat'\] match no file"):
        DeckTemplate(tmp_path, render=["*.dat"])


def test_the_digest_follows_every_file_byte(tmp_path):
    (tmp_path / "deck.inp").write_text("{{ x }}\n")
    (tmp_path / "mesh.dat").write_bytes(b"1 2 3\n")
    before = DeckTemplate(tmp_path).digest()
    assert DeckTemplate(tmp_path).digest() == before
    (tmp_path / "mesh.dat").write_bytes(b"1 2 4\n")
    assert DeckTemplate(tmp_path).digest() != before


def _folder(tmp_path, name="deck"):
    folder = tmp_path / name
    (folder / "mesh" / "parts").mkdir(parents=True)
    (folder / "beam.inp").write_text("*INCLUDE, INPUT=mesh/parts/nodes.inc\nE = {{ E }}\n")
    (folder / "mesh" / "parts" / "nodes.inc").write_text("1, 0.0, 0.0\n2, 1.0, 0.0\n")
    (folder / "mesh" / "sets.inc").write_text("*NSET, NSET=TIP\n2\n")
    (folder / "data.bin").write_bytes(bytes(range(256)))
    return folder


@pytest.mark.parametrize("static", ["copy", "link"])
def test_static_files_are_copied_or_linked_into_nested_directories(tmp_path, static):
    """Static files land at their relative paths, two directory levels down and in the
    directory above that one included; with static="link" each is a symbolic link to the
    template's own file, else a copy."""
    folder = _folder(tmp_path)
    deck = DeckTemplate(folder, static=static)
    assert deck.statics == ["data.bin", "mesh/parts/nodes.inc", "mesh/sets.inc"]
    run = tmp_path / "run"
    run.mkdir()
    deck.render_into(run, {"E": 7.5})
    assert (run / "beam.inp").read_text().endswith("E = 7.5\n")
    for rel in deck.statics:
        assert (run / rel).read_bytes() == (folder / rel).read_bytes()
        assert (run / rel).is_symlink() == (static == "link")
        if static == "link":
            assert (run / rel).resolve() == (folder / rel).resolve()


def test_rendering_is_strict_even_without_check(tmp_path):
    """A variable missing at render time raises; it never renders as an empty string."""
    (tmp_path / "deck.inp").write_text("E = {{ E }}\n")
    run = tmp_path / "run"
    run.mkdir()
    with pytest.raises(TemplateError, match="deck.inp: rendering failed: UndefinedError: 'E' "
                                            "is undefined"):
        DeckTemplate(tmp_path / "deck.inp").render_into(run, {})


def test_an_unknown_filter_is_refused_before_any_run_and_a_failing_expression_names_its_file(
        tmp_path):
    """An unknown filter passes parsing and failed only at the first run, with a Jinja
    traceback; an expression that raises (a division by zero) ended the study the same way."""
    (tmp_path / "deck.inp").write_text("ok\nE = {{ E | nosuchfilter }}\n")
    with pytest.raises(TemplateError, match=r"^deck.inp, line 2: No filter named "
                                            r"'nosuchfilter'.$"):
        DeckTemplate(tmp_path)
    (tmp_path / "deck.inp").write_text("E = {{ E / 0 }}\n")
    run = tmp_path / "run"
    run.mkdir()
    with pytest.raises(TemplateError, match=r"deck.inp: rendering failed: ZeroDivisionError: "
                                            r".* \(with the run's variables \{'E': 2.0\}\)"):
        DeckTemplate(tmp_path).render_into(run, {"E": 2.0})


def test_a_binary_file_that_a_render_pattern_names_is_refused(tmp_path):
    (tmp_path / "deck.inp").write_text("{{ E }}\n")
    (tmp_path / "mesh.dat").write_bytes(b"\xff\xfe\x00binary")
    with pytest.raises(TemplateError, match=r"^mesh.dat: matches render=\['\*.dat', '\*.inp'\] "
                                            r"but is not a text file \(it holds NUL bytes\)$"):
        DeckTemplate(tmp_path, render=["*.dat", "*.inp"])
    assert DeckTemplate(tmp_path, render="*.inp").statics == ["mesh.dat"]


def test_which_files_are_templates(tmp_path):
    """A single file is always a template; in a directory without patterns a file is a
    template when it uses the syntax (a constant expression too), else static; with patterns,
    the files they match."""
    (tmp_path / "plain.inp").write_text("*NODE\n1, 0.0\n")
    (tmp_path / "const.inp").write_text("n = {{ 2 * 3 }}\n")
    (tmp_path / "raw.inp").write_text("{% raw %}{{ x }}{% endraw %}\n")
    (tmp_path / "var.inp").write_text("E = {{ E }}\n")
    single = DeckTemplate(tmp_path / "plain.inp")
    assert list(single.sources) == ["plain.inp"] and single.statics == []
    deck = DeckTemplate(tmp_path)
    assert sorted(deck.sources) == ["const.inp", "raw.inp", "var.inp"]
    assert deck.statics == ["plain.inp"]
    chosen = DeckTemplate(tmp_path, render=["plain.inp", "var.inp"])
    assert sorted(chosen.sources) == ["plain.inp", "var.inp"]
    assert sorted(chosen.statics) == ["const.inp", "raw.inp"]


def test_variables_are_the_inputs_a_deck_needs_at_their_first_use(tmp_path):
    """Loop variables and names set inside the template are not inputs; each input is
    recorded at its first use, and an undefined one is named in file and line order."""
    (tmp_path / "a.inp").write_text("{% set k = 2 %}\n{% for n in nodes %}\n{{ n }} {{ k }} "
                                    "{{ zeta }}\n{% endfor %}\n{{ alpha }} {{ zeta }}\n")
    deck = DeckTemplate(tmp_path / "a.inp")
    assert deck.variables == {"nodes": ("a.inp", 2), "zeta": ("a.inp", 3),
                              "alpha": ("a.inp", 5)}
    with pytest.raises(TemplateError, match=r"^a.inp, line 3: the placeholder 'zeta' names no "
                                            r"input or constant \(known: b, nodes\)$"):
        deck.check(["nodes", "b"])


def test_the_digest_follows_the_settings_and_the_paths_not_the_folder(tmp_path):
    """Results are cached under the digest: another static mode, render pattern or option,
    or a file moved within the template, is another deck; the same files elsewhere are the
    same deck (a moved project resumes)."""
    folder = _folder(tmp_path)
    base = DeckTemplate(folder).digest()
    assert DeckTemplate(_folder(tmp_path, "elsewhere")).digest() == base
    others = [DeckTemplate(folder, static="link").digest(),
              DeckTemplate(folder, render="*.inp").digest(),
              DeckTemplate(folder, options={"trim_blocks": False}).digest()]
    (folder / "data.bin").rename(folder / "mesh" / "data.bin")
    others.append(DeckTemplate(folder).digest())
    assert len({base, *others}) == 5
    single = DeckTemplate(folder / "beam.inp").digest()
    (folder / "beam.inp").write_text("E = {{ E }}\n")
    assert DeckTemplate(folder / "beam.inp").digest() not in {single, base, *others}


def test_a_syntax_error_says_how_to_keep_a_decks_own_braces(tmp_path):
    (tmp_path / "deck.tcl").write_text("set a 1\nputs {{ x }\n")
    with pytest.raises(TemplateError, match=(
            r"^deck.tcl, line 2: .* \(a deck whose own syntax uses '\{\{', '\{%' or '\{#' can "
            r"change the delimiters or use \{% raw %\}\)$")):
        DeckTemplate(tmp_path / "deck.tcl")


@pytest.mark.parametrize("make, message", [
    (lambda p: DeckTemplate(p / "nope.inp"), r"^no template '.*nope.inp': no such file or "
                                             r"directory$"),
    (lambda p: DeckTemplate(p, static="hardlink"), r"^static must be one of \('copy', 'link'\), "
                                                   r"got static='hardlink'$"),
    (lambda p: DeckTemplate(p, options={"colour": 1}), r"^bad template options \{'colour': 1\}"),
    (lambda p: DeckTemplate(p / "empty"), r"^the template directory '.*empty' holds no files$"),
    (lambda p: DeckTemplate(p, render="*.dat"), r"^render pattern\(s\) \['\*.dat'\] match no "
                                                r"file of '/.*'$"),
    (lambda p: DeckTemplate(p / "deck.inp").variables_of("{{ x"), r"^'\{\{ x': unexpected end"),
])
def test_bad_templates_are_refused_naming_what_is_wrong(tmp_path, make, message):
    (tmp_path / "deck.inp").write_text("{{ E }}\n")
    (tmp_path / "empty").mkdir()
    with pytest.raises((TemplateError, ValueError), match=message):
        make(tmp_path)


@pytest.mark.parametrize("single", [True, False])
def test_a_deck_that_is_not_utf8_renders_and_keeps_its_other_bytes(tmp_path, single):
    """A deck with Latin-1 comments (Matériau) was taken for a binary file and copied with
    its placeholders unrendered: the program read '{{ E }}' in every run, without a word."""
    deck = "** Mat\xe9riau, \xfcber\r\n*ELASTIC\n{{ E }}, 0.3\n".encode("latin-1")
    (tmp_path / "tpl").mkdir()
    (tmp_path / "tpl" / "material.inc").write_bytes(deck)
    (tmp_path / "tpl" / "mesh.bin").write_bytes(b"\x00\xff{{ E }}")  # binary: copied
    template = DeckTemplate(tmp_path / "tpl" / "material.inc" if single else tmp_path / "tpl")
    assert "material.inc" in template.sources and template.variables["E"][0] == "material.inc"
    run = tmp_path / "run"
    run.mkdir()
    template.render_into(run, {"E": 7.5})
    assert (run / "material.inc").read_bytes() == deck.replace(b"{{ E }}", b"7.5").replace(
        b"\r\n", b"\n")  # Jinja writes its newline_sequence
    if not single:
        assert (run / "mesh.bin").read_bytes() == b"\x00\xff{{ E }}"


def test_line_ends_and_bytes_without_template_syntax_are_kept(tmp_path):
    """Jinja2 writes every line end as a newline, so a file with a carriage return rendered
    to something else than itself and was taken for a template: a CRLF mesh came out with
    LF ends, binary data without NUL bytes came out changed, and a CRLF deck was rendered
    with LF ends (a review)."""
    import os

    folder = tmp_path / "deck"
    folder.mkdir()
    (folder / "main.inp").write_bytes(b"*ELASTIC\r\n{{ E }}, 0.3\r\n*STEP\r\n")
    (folder / "mesh.inc").write_bytes(b"*NODE\r\n1, 0, 0\r\n")
    binary = bytes(range(1, 256)) * 4 + b"\r\r\n\n\r"  # no NUL, no '{' after '{'
    (folder / "field.bin").write_bytes(binary)
    (folder / "old_mac.inp").write_bytes(b"x = {{ E }}\rend\r")
    deck = DeckTemplate(folder)
    assert sorted(deck.statics) == ["field.bin", "mesh.inc"]
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    deck.render_into(run_dir, {"E": 2.5})
    assert (run_dir / "main.inp").read_bytes() == b"*ELASTIC\r\n2.5, 0.3\r\n*STEP\r\n"
    assert (run_dir / "mesh.inc").read_bytes() == b"*NODE\r\n1, 0, 0\r\n"
    assert (run_dir / "field.bin").read_bytes() == binary
    assert (run_dir / "old_mac.inp").read_bytes() == b"x = 2.5\rend\r"
    # a newline_sequence of the user's own is used for every file
    unix = DeckTemplate(folder, options={"newline_sequence": "\n"})
    os.remove(run_dir / "main.inp")
    unix.render_into(run_dir, {"E": 2.5})
    assert (run_dir / "main.inp").read_bytes() == b"*ELASTIC\n2.5, 0.3\n*STEP\n"


def test_an_executable_file_stays_executable_in_the_run_directory(tmp_path):
    """Copied with copyfile, or rendered, a run script lost its x bit, and a command
    ["./solver.sh"] stopped the study with "Permission denied" (a bug hunt)."""
    import os
    import sys

    folder = tmp_path / "deck"
    folder.mkdir()
    (folder / "deck.txt").write_text("{{ a }}\n")
    (folder / "solver.sh").write_text(f"#!/bin/sh\n{sys.executable} -c \"print(2 * "
                                      "float(open('deck.txt').read()))\"\n")
    (folder / "render.sh").write_text("#!/bin/sh\necho {{ a }}\n")
    (folder / "mesh.inc").write_text("*NODE\n")
    for name in ("solver.sh", "render.sh"):
        os.chmod(folder / name, 0o750)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    DeckTemplate(folder).render_into(run_dir, {"a": 1.5})
    assert os.stat(run_dir / "solver.sh").st_mode & 0o111 == 0o110  # the source's x bits
    assert os.stat(run_dir / "render.sh").st_mode & 0o111 == 0o110
    assert not os.stat(run_dir / "mesh.inc").st_mode & 0o111
    model = ExternalModel(folder, ["./solver.sh"], outputs={"y": Regex(r"^(\S+)$")},
                          input_names=["a"])
    out = model(np.array([[1.5]]))
    assert out.status.tolist() == [0] and out.values.tolist() == [[3.0]]


def test_a_deck_includes_the_templates_own_files_and_no_other(tmp_path):
    """{% include %} stopped the study with "no loader for this environment specified" (a
    bug hunt). It now reads the template's own files, rendered with the run's variables; a
    file outside the template, which its identity does not cover, is refused at once."""
    folder = tmp_path / "deck"
    (folder / "inc").mkdir(parents=True)
    (folder / "main.inp").write_text("*HEADING\n{% include 'inc/mat.inc' %}*STEP\n")
    (folder / "inc" / "mat.inc").write_text("*ELASTIC\n{{ E }}, 0.3\n")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    DeckTemplate(folder).render_into(run_dir, {"E": 7.0})
    assert (run_dir / "main.inp").read_text() == "*HEADING\n*ELASTIC\n7.0, 0.3\n*STEP\n"
    (tmp_path / "other.inc").write_text("{{ E }}\n")
    (tmp_path / "single.inp").write_text("x\n{% include 'other.inc' %}\n")
    with pytest.raises(TemplateError, match=r"single.inp, line 2: it includes 'other.inc', "
                                            r"which is not a file of the template"):
        DeckTemplate(tmp_path / "single.inp")


def test_a_file_no_render_pattern_matches_that_uses_an_input_is_warned_of(tmp_path):
    """With render=["*.inp"], mat.inc reached the program holding '{{ E }}' without a word
    (a bug hunt)."""
    folder = tmp_path / "deck"
    folder.mkdir()
    (folder / "main.inp").write_text("{{ E }}\n")
    (folder / "mat.inc").write_text("*ELASTIC\n{{ E }}, 0.3\n")
    (folder / "notes.txt").write_text("{{ unrelated }}\n")  # names no input: not warned of
    with pytest.warns(UserWarning, match=r"^mat.inc uses the placeholder\(s\) \['E'\] but "
                                         r"matches no render pattern \['\*.inp'\]"):
        ExternalModel(folder, ["cat", "main.inp"], outputs={"y": Regex(r"^(\S+)$")},
                      input_names=["E"], render=["*.inp"])


def test_an_input_named_as_a_jinja_global_is_used_by_the_deck(tmp_path):
    """An input named range (one of Jinja2's own names) was said to be "used by no template
    file" though the deck used it (a bug hunt); the input's value hides the global."""
    (tmp_path / "deck.txt").write_text("r = {{ range }}\n")
    model = ExternalModel(tmp_path / "deck.txt", ["cat", "deck.txt"],
                          outputs={"y": Regex(r"r = (\S+)")}, input_names=["range"])
    assert model(np.array([[2.5]])).values.tolist() == [[2.5]]


def test_an_included_file_that_no_render_pattern_matches_renders_its_placeholders(tmp_path):
    """With render=["*.inp"], main.inp including mat.inc, whose E only it uses: E was "used by
    no template file" and mat.inc was warned of as copied raw (a review). A variable that the
    including file sets is not taken for an unknown input."""
    import warnings

    folder = tmp_path / "deck"
    folder.mkdir()
    (folder / "main.inp").write_text("{% set twice = E * 2 %}{% include 'mat.inc' %}")
    (folder / "mat.inc").write_text("*ELASTIC\n{{ E }}, {{ twice }}\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = ExternalModel(folder, ["cat", "main.inp"],
                              outputs={"y": Regex(r"^(\S+),", match="first")},
                              input_names=["E"], render=["*.inp"])
    assert model(np.array([[3.0]])).values.tolist() == [[3.0]]
