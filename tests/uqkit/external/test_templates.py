"""Deck templates: what renders, what is copied, and what is refused before any run."""
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
