//! The layering rule of docs/ARCHITECTURE.md, checked against the member
//! manifests: dependencies between members point down only.

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use crate::root;

    /// Each member and the members it may depend on (normal, dev or build).
    const ALLOWED: &[(&str, &[&str])] = &[
        ("crates/pool", &[]),
        ("crates/executor", &["weir-pool"]),
        ("crates/planner", &[]),
        ("crates/expr", &["weir-planner"]),
        (
            "crates/pipeline",
            &["weir-executor", "weir-expr", "weir-planner"],
        ),
        (
            "crates/engine",
            &["weir-executor", "weir-pipeline", "weir-planner"],
        ),
        (
            "crates/run",
            &["weir-engine", "weir-executor", "weir-planner"],
        ),
        ("crates/cli", &["weir-engine", "weir-run"]),
        ("tests/loom", &["weir-executor", "weir-pool"]),
        ("xtask", &[]),
    ];

    /// The `weir-*` names a manifest depends on, in any dependency table.
    fn member_deps(manifest: &str) -> BTreeSet<String> {
        let mut in_deps = false;
        let mut out = BTreeSet::new();
        for line in manifest.lines() {
            let line = line.trim();
            if line.starts_with('[') {
                in_deps = line.contains("dependencies");
                continue;
            }
            if in_deps && line.starts_with("weir-") {
                let name: String = line
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '-')
                    .collect();
                out.insert(name);
            }
        }
        out
    }

    #[test]
    fn dependencies_point_down_only() {
        let mut seen = BTreeSet::new();
        for (member, allowed) in ALLOWED {
            let path = root().join(member).join("Cargo.toml");
            let manifest = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            for dep in member_deps(&manifest) {
                assert!(
                    allowed.contains(&dep.as_str()),
                    "{member} depends on {dep}: an edge docs/ARCHITECTURE.md does not allow"
                );
            }
            seen.insert(member.to_string());
        }
        // every workspace member is covered by the rule
        let workspace = std::fs::read_to_string(root().join("Cargo.toml")).expect("root manifest");
        let members_start = workspace.find("members = [").expect("members list");
        let members_end = members_start
            + workspace[members_start..]
                .find(']')
                .expect("end of members");
        for member in workspace[members_start..members_end]
            .split('"')
            .skip(1)
            .step_by(2)
        {
            assert!(
                seen.contains(member),
                "member {member} has no layering rule"
            );
        }
    }

    #[test]
    fn an_upward_edge_is_caught() {
        let manifest = "[dependencies]\nweir-engine.workspace = true\n[dev-dependencies]\nweir-pool = { path = \"x\" }\n";
        let deps = member_deps(manifest);
        assert_eq!(
            deps,
            BTreeSet::from(["weir-engine".to_string(), "weir-pool".to_string()])
        );
    }
}
