//! `kvrender completion`: the bash script, loaded into a real bash, completes commands, option
//! values and paths; the other shells' scripts are written.

use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn script(shell: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_kvrender"))
        .args(["completion", shell])
        .output()
        .expect("kvrender runs");
    assert_eq!(out.status.code(), Some(0), "{shell}");
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// What bash offers for the words `words` (the last one being completed), with the script
/// loaded, run from `testdata/`.
fn complete(words: &[&str]) -> Vec<String> {
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "source <(\"$KVRENDER\" completion bash)\n\
         COMP_WORDS=({words})\n\
         COMP_CWORD={cword}\n\
         _kvrender kvrender '{cur}' '{prev}'\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        words = quoted.join(" "),
        cword = words.len() - 1,
        cur = words[words.len() - 1],
        prev = words[words.len() - 2],
    );
    let out = Command::new("bash")
        .current_dir(format!("{ROOT}/testdata"))
        .env("KVRENDER", env!("CARGO_BIN_EXE_kvrender"))
        .args(["--norc", "-c", &program])
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut offered: Vec<String> = String::from_utf8(out.stdout)
        .expect("UTF-8")
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect();
    offered.sort();
    offered
}

#[test]
fn bash_completes_commands_values_and_paths() {
    assert_eq!(complete(&["kvrender", "va"]), ["validate"]);
    assert_eq!(complete(&["kvrender", "mi"]), ["migrate"]);
    assert_eq!(
        complete(&["kvrender", "validate", "--format", ""]),
        ["github", "gitlab", "human", "json", "sarif"]
    );
    assert_eq!(complete(&["kvrender", "vmi", "--st"]), ["--stage"]);
    assert_eq!(complete(&["kvrender", "validate", "--st"]), ["--strict"]);
    assert_eq!(
        complete(&["kvrender", "expand", "--catalog", "kr"]),
        ["krm"]
    );
    // A positional PATH is left to bash's own file completion (`-o default`, below).
    assert!(complete(&["kvrender", "build", "ex"]).is_empty());
    let out = Command::new("bash")
        .env("KVRENDER", env!("CARGO_BIN_EXE_kvrender"))
        .args([
            "--norc",
            "-c",
            "source <(\"$KVRENDER\" completion bash) && complete -p kvrender",
        ])
        .output()
        .expect("bash runs");
    let registered = String::from_utf8_lossy(&out.stdout);
    assert!(
        registered.contains("-F _kvrender") && registered.contains("-o default"),
        "{registered}"
    );
}

#[test]
fn every_shell_gets_a_script_naming_every_command() {
    for shell in ["bash", "elvish", "fish", "powershell", "zsh"] {
        let script = script(shell);
        for command in [
            "build", "expand", "validate", "vmi", "diff", "fn", "migrate",
        ] {
            assert!(script.contains(command), "{shell}: {command}");
        }
    }
}
