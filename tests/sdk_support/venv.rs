//! Python virtualenvs under `<target>` holding exactly a pinned requirements file.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::Command;

use super::run_checked;

/// The cargo target directory, found from the integration-test temp dir so CARGO_TARGET_DIR is
/// honoured.
pub fn target_dir() -> PathBuf {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent().map_or_else(|| tmp.clone(), Path::to_path_buf)
}

/// The venv's interpreter.
pub fn venv_python(venv: &Path) -> PathBuf {
    venv.join("bin").join("python")
}

/// Creates or refreshes the venv at `venv` so it holds `requirements`, and returns its
/// interpreter. A marker holding the installed requirements makes reruns instant; tests run in
/// parallel threads and (under nextest) processes, so one installs under a file lock and the
/// others wait.
pub fn ensure_venv(venv: &Path, requirements: &Path) -> PathBuf {
    let wanted = fs::read_to_string(requirements).unwrap();
    let marker = venv.join("strata-requirements.txt");
    fs::create_dir_all(venv.parent().unwrap()).unwrap();
    let lock = File::create(venv.with_extension("lock")).unwrap();
    lock.lock().unwrap();
    let python = venv_python(venv);
    let installed = fs::read_to_string(&marker).unwrap_or_default();
    if installed != wanted || !python.exists() {
        let _ = fs::remove_file(&marker);
        if !python.exists() {
            // `--clear`: a directory left half-made by an interrupted run is rebuilt whole.
            run_checked(
                Command::new("python3")
                    .args(["-m", "venv", "--clear"])
                    .arg(venv),
                "python3 -m venv (needs Python 3 with the venv module, e.g. apt install python3-venv)",
            );
        }
        run_checked(
            Command::new(&python)
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    "-r",
                ])
                .arg(requirements),
            &format!("pip install -r {}", requirements.display()),
        );
        fs::write(&marker, &wanted).unwrap();
    }
    lock.unlock().unwrap();
    python
}
