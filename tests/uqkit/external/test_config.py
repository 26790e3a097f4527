"""A study of an external program in one TOML file (:mod:`uqkit.external.config`): what each
section becomes, its defaults, and a refusal for every bad key that names the file, the key
and the value."""
import re
import textwrap

import numpy as np
import pytest

from uqkit import sample
from uqkit.external.config import ConfigError, Margin, load_config

DECK = "E = {{ E }}\nh = {{ h }}\nL = {{ L }}\n"
BASE = """\
[inputs]
E = "normal(210000, 10000)"
h = "uniform(30, 50)"

[model]
template = "deck.inp"
command = ["python", "solver.py"]
constants = { L = 1000.0 }

[outputs.v]
regex = 'v = (\\S+)'
file = "out.txt"
"""


def study(tmp_path, text=BASE, name="study.toml"):
    (tmp_path / "deck.inp").write_text(DECK)
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def refused(tmp_path, text, message):
    path = study(tmp_path, text)
    with pytest.raises(ConfigError, match=f"^{re.escape(str(path))}{message}"):
        load_config(path)


def test_a_minimal_study_gets_the_documented_defaults(tmp_path):
    path = study(tmp_path)
    config = load_config(path)
    assert config.path == path
    assert config.inputs.names == ("E", "h")
    assert config.model.output_names == ("v",)
    assert config.sampling == {"n": 100, "rule": "random", "seed": 0}
    assert config.sobol is None and config.failure is None
    X = sample(config.inputs, 20_000, seed=1).values
    np.testing.assert_allclose(np.corrcoef(X.T)[0, 1], 0.0, atol=0.03)


def test_every_optional_section_is_read_with_its_defaults_filled(tmp_path):
    (tmp_path / "runs").mkdir()
    path = study(tmp_path, BASE.replace('constants = { L = 1000.0 }',
                                        'constants = { L = 1000.0 }\nworkdir = "runs"') + """
[correlation]
matrix = [[1, 0.8], [0.8, 1]]

[sampling]
n = 12
rule = "lhs"

[sobol]
n = 64

[failure]
output = "v"
above = 2.5
method = "form"
""")
    config = load_config(path)
    assert config.sampling == {"n": 12, "rule": "lhs", "seed": 0}
    assert config.sobol == {"n": 64, "bootstrap": 100, "seed": 0, "replicates": None}
    assert config.failure == {"method": "form", "seed": 0, "output": "v", "above": 2.5}
    assert config.model.workdir == str(tmp_path / "runs")  # relative to the study file
    # the copula ties the inputs: rank correlation near Nataf's for rho = 0.8 (0.786)
    X = sample(config.inputs, 20_000, seed=1).values
    from scipy import stats

    assert stats.spearmanr(X[:, 0], X[:, 1])[0] == pytest.approx(0.786, abs=0.02)


def test_json_and_table_outputs_and_the_failure_and_sobol_defaults(tmp_path):
    path = study(tmp_path, BASE + """
[outputs.w]
json = "r.json"
key = "a.b"

[outputs.u]
table = "t.csv"
column = "u"

[sobol]
bootstrap = 50

[failure]
output = "w"
below = -1.0
""")
    config = load_config(path)
    assert config.model.output_names == ("v", "w", "u")
    parsers = {name: parser.describe() for name, parser in config.model.outputs.items()}
    assert parsers["w"] == {"json": "r.json", "key": "a.b", "size": 1}
    assert parsers["u"]["table"] == "t.csv" and parsers["u"]["column"] == "u"
    assert config.sobol == {"n": 256, "bootstrap": 50, "seed": 0, "replicates": None}
    assert config.failure == {"method": "mc", "seed": 0, "output": "w", "below": -1.0}


@pytest.mark.parametrize("n", [2, 4, 256])
def test_sobol_base_samples_are_powers_of_two(tmp_path, n):
    assert load_config(study(tmp_path, BASE + f"[sobol]\nn = {n}\n")).sobol["n"] == n


def test_sobol_replicates_replace_the_bootstrap_and_are_checked_on_loading(tmp_path):
    config = load_config(study(tmp_path, BASE + "[sobol]\nn = 128\nreplicates = 8\n"))
    assert config.sobol == {"n": 128, "seed": 0, "replicates": 8, "bootstrap": None}
    refused(tmp_path, BASE + "[sobol]\nn = 128\nreplicates = 8\nbootstrap = 100\n",
            re.escape(": [sobol] bootstrap = 100 and replicates = 8 both give intervals: "
                      "keep one of them") + "$")
    refused(tmp_path, BASE + "[sobol]\nn = 128\nreplicates = 3\n",
            re.escape(": [sobol] replicates=3 does not split n=128 into replicate designs"))
    refused(tmp_path, BASE + "[sobol]\nn = 16\nreplicates = 2\n",
            re.escape(": [sobol] n=16 is too small for replicate intervals: they need n >= 32"))


@pytest.mark.parametrize("n", ["0", "1", "3", "6", "96", "4.0", '"8"'])
def test_other_sobol_sizes_are_refused(tmp_path, n):
    refused(tmp_path, BASE + f"[sobol]\nn = {n}\n",
            re.escape(f": [sobol] n must be a power of 2, got {eval(n)!r}") + "$")


@pytest.mark.parametrize("text, message", [
    (BASE + "[plots]\nx = 1\n", r": unknown section 'plots' \(known: correlation, failure, "
                                r"inputs, model, outputs, sampling, sobol\)$"),
    (BASE.replace("constants", "constant"), r": \[model\]: unknown key 'constant' \(known: "
                                            r"chunk_size, command, constants, .*\)$"),
    ("sampling = 3\n" + BASE, r": \[sampling\] must be a table$"),
    (BASE.replace("[outputs.v]", "[unused]"), r": unknown section 'unused'"),
    ("[inputs]\nE = \"normal(0, 1)\"\n[model]\ntemplate = \"deck.inp\"\n",
     r": the \[outputs\] section is missing or empty$"),
    (BASE.replace('h = "uniform(30, 50)"', 'h = "uniform(50, 30)"'),
     r": \[inputs\] h = 'uniform\(50, 30\)': "),
    (BASE + "[correlation]\nmatrix = [[1, 2], [2, 1]]\n",
     r": \[correlation\] matrix: the nataf correlation matrix must be symmetric positive "
     r"definite$"),
    (BASE.replace('template = "deck.inp"', 'template = "nope.inp"'),
     r": \[model\] template '.*nope.inp': no such file or directory$"),
    (BASE.replace('command = ["python", "solver.py"]\n', ""), r": \[model\] needs 'command'$"),
    (BASE.replace("constants = { L = 1000.0 }", ""),
     r": \[model\] template: deck.inp, line 3: the placeholder 'L' names no input or "
     r"constant"),
    (BASE.replace('regex = \'v = (\\S+)\'\n', ""),
     r": \[outputs.v\]: give exactly one of regex, table or json, got none$"),
    (BASE + 'table = "t.csv"\n',
     r": \[outputs.v\]: give exactly one of regex, table or json, got \['regex', 'table'\]$"),
    (BASE + 'column = 2\n', r": \[outputs.v\]: unknown key 'column' \(known: file, group, "
                            r"match, regex, size\)$"),
    (BASE.replace('regex = \'v = (\\S+)\'\nfile = "out.txt"', 'table = "t.csv"'),
     r": \[outputs.v\]: a table output needs 'column'$"),
    (BASE.replace('regex = \'v = (\\S+)\'\nfile = "out.txt"', 'json = "r.json"'),
     r": \[outputs.v\]: a json output needs 'key'$"),
    (BASE.replace('file = "out.txt"', 'match = "middle"'),
     r": \[outputs.v\]: match must be one of"),
    (BASE + '[outputs.x]\nregex = "x=(\\\\S+)"\n[failure]\noutput = "w"\nbelow = 1\n',
     r": \[failure\] output = 'w' is not an output \(outputs: v, x\)$"),
    (BASE.replace("[outputs.v]\n", "[outputs]\nw = 3\n[outputs.v]\n"),
     r": \[outputs.w\] must be a table with regex, table or json$"),
    (BASE + '[failure]\noutput = "v"\nbelow = 1\nmethod = "sorm"\nform_result = 1\n',
     r": \[failure\]: unknown option of method 'sorm' 'form_result'"),
    (BASE + '[failure]\noutput = "v"\n',
     r": \[failure\]: give exactly one of below or above \(failure when the output is below "
     r"or above it\), got none$"),
    (BASE + '[failure]\noutput = "v"\nbelo = 1\n',
     r": \[failure\]: give exactly one of below or above .*got none; unknown key\(s\) "
     r"\['belo'\]$"),
    (BASE + '[failure]\noutput = "v"\nbelow = 1\nabove = 2\n',
     r": \[failure\]: give exactly one of below or above .*got \['below', 'above'\]$"),
    (BASE + '[failure]\noutput = "v"\nbelow = true\n',
     r": \[failure\] below = True must be a finite number$"),
    (BASE + '[failure]\noutput = "v"\nabove = inf\n',
     r": \[failure\] above = inf must be a finite number$"),
    (BASE + '[failure]\noutput = "v"\nabove = "1"\n',
     r": \[failure\] above = '1' must be a finite number$"),
    (BASE + '[failure]\noutput = "v"\nbelow = 1\nmethod = "mcmc"\n',
     r": \[failure\] method = 'mcmc' is not one of mc, form, sorm, is, subset, active$"),
    (BASE + '[failure]\noutput = "v"\nbelow = 1\nmethod = "form"\nn = 100\n',
     r": \[failure\]: unknown option of method 'form' 'n' \(known: "),
    # these raised a raw TypeError / AttributeError, or passed to fail after the main study
    (BASE + '[failure]\noutput = "v"\nbelow = 1\nmethod = ["mc"]\n',
     r": \[failure\] method = \['mc'\] must be a method's name$"),
    (BASE + '[failure]\noutput = "v"\nbelow = 1\nseed = -1\n',
     r": \[failure\] seed must be an integer >= 0, got seed=-1$"),
    (BASE.replace("constants = { L = 1000.0 }", 'env = ["A=1"]'),
     r": \[model\] env must be a table \(a dict\) of variable -> value, got env=\['A=1'\]$"),
    (BASE.replace("constants = { L = 1000.0 }", "timeout = inf"),
     r": \[model\] timeout must be a finite number of seconds > 0 or None, got timeout=inf$"),
    # a number was taken for a folder named "5" (a bug hunt)
    (BASE.replace("constants = { L = 1000.0 }", "workdir = 5"),
     r": \[model\] workdir must be a path \(a string\), got workdir = 5$"),
    (BASE + "[sobol]\nbootstrap = 10\n",
     r": \[sobol\] bootstrap must be 0 \(no intervals\) or >= 20 resamples, got bootstrap=10$"),
    (BASE + '[sobol]\nseed = "x"\n', r": \[sobol\] seed must be an integer >= 0, got seed='x'$"),
    (BASE.replace('file = "out.txt"', "file = 5"),
     r": \[outputs.v\]: Regex\('v = \(\\\\S\+\)'\): file must be a file name or None, got file=5$"),
    (BASE.replace('regex = \'v = (\\S+)\'\nfile = "out.txt"',
                  'table = "t.csv"\ncolumn = 0\ncomments = 5'),
     r": \[outputs.v\]: Table\('t.csv'\): comments must be a string or None, got comments=5$"),
])
def test_a_bad_study_file_is_refused_naming_the_file_key_and_value(tmp_path, text, message):
    refused(tmp_path, text, message)


def test_unreadable_files_are_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"nope.toml: no such file$"):
        load_config(tmp_path / "nope.toml")
    (tmp_path / "bad.toml").write_text("[inputs\n")
    with pytest.raises(ConfigError, match=r"bad.toml: not valid TOML: "):
        load_config(tmp_path / "bad.toml")


class Outputs:
    """Two outputs per row, (x0 + x1, x0 - x1), a failed third row, and what it was given."""

    input_names = ("a", "b")
    takes_context = True
    cores_per_run = 2
    chunk_size = 5

    def __call__(self, X, context=None):
        self.context = context
        values = np.column_stack([X[:, 0] + X[:, 1], X[:, 0] - X[:, 1]])
        status = np.zeros(len(X), int)
        status[2:] = 1
        values[2:] = np.nan
        return values, status, np.where(status == 1, "diverged", "")


def test_margin_is_the_distance_to_the_limit_with_the_models_status():
    X = np.array([[3.0, 1.0], [0.5, 0.5], [1.0, 1.0]])
    model = Outputs()
    below = Margin(model, column=1, below=1.5)
    margin, status, reasons = below(X, context={"run": 7})
    assert margin[:2].tolist() == [0.5, -1.5] and np.isnan(margin[2])
    assert status.tolist() == [0, 0, 1] and list(reasons) == ["", "", "diverged"]
    assert model.context == {"run": 7}
    above = Margin(model, column=0, above=2.0)
    assert above(X)[0][:2].tolist() == [-2.0, 1.0]
    missing = Margin(model, column=2, below=0.0)  # a column the model does not give
    assert np.isnan(missing(X)[0]).all()
    for attr in ("input_names", "takes_context", "cores_per_run", "chunk_size"):
        assert getattr(below, attr) == getattr(model, attr)
    assert not hasattr(Margin(len, column=0, below=0.0), "takes_context")
    description = below.describe()
    assert description["margin"] == {"column": 1, "below": 1.5, "above": None}
    from uqkit.execution.model import describe_model

    assert description["model"] == describe_model(model)
    assert Margin(model, 1, below=1.0).describe() != description
