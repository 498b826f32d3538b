//! Source paths from the debug information: relative ones (a binary built with
//! `-fdebug-prefix-map=DIR=.`, as the embedded demo's is) are found beside the binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use memscape_cycles::symbolize::{LoadBase, Symbolizer};
use object::{Object as _, ObjectSymbol as _};

#[test]
fn relative_source_paths_resolve_beside_the_binary() {
    let dir = tempfile_dir("symbolize-relative");
    std::fs::write(
        dir.join("prog.c"),
        "int twice(int x) {\n    return 2 * x;\n}\nint main(void) { return twice(0); }\n",
    )
    .unwrap();
    let out = Command::new("gcc")
        .current_dir(&dir)
        .args(["-O0", "-g", "-no-pie"])
        .arg(format!("-fdebug-prefix-map={}=.", dir.display()))
        .args(["-o", "prog", "prog.c"])
        .output()
        .expect("gcc is needed (apt-get install -y gcc)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let exe = dir.join("prog");
    let bytes = std::fs::read(&exe).unwrap();
    let elf = object::File::parse(&*bytes).unwrap();
    let twice = elf
        .symbols()
        .find(|s| s.name() == Ok("twice"))
        .expect("the symbol `twice`")
        .address();

    let mut symbols = Symbolizer::open(&exe, LoadBase::Detect, &[twice]).unwrap();
    let info = symbols.lookup(twice + 4).expect("inside .text");
    assert_eq!(info.function.as_deref(), Some("twice"));
    let file = info.file.clone().unwrap();
    assert_eq!(std::path::Path::new(&file), dir.join("prog.c"), "{file}");
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("return 2 * x")
    );

    // Without the source beside the binary the debug information's own path is kept.
    std::fs::remove_file(dir.join("prog.c")).unwrap();
    let mut symbols = Symbolizer::open(&exe, LoadBase::Detect, &[twice]).unwrap();
    let file = symbols.lookup(twice + 4).unwrap().file.clone().unwrap();
    assert!(!std::path::Path::new(&file).is_absolute(), "{file}");
    assert!(file.ends_with("prog.c"), "{file}");
}

fn tempfile_dir(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.canonicalize().unwrap()
}
