//! Filter profiles the graph view offers: the shipped ones (embedded in memscape-graph) and the
//! user's own, saved as TOML in `$XDG_CONFIG_HOME/memscape/profiles/NAME.toml` (by default
//! `~/.config/memscape/profiles/`). `memscape render --profile NAME` finds them by name too.

use std::path::{Path, PathBuf};

use memscape_graph::filter::{Profile, SHIPPED_PROFILES, load_profile_dir};

/// Where user profiles are saved: `$XDG_CONFIG_HOME/memscape/profiles`, else
/// `$HOME/.config/memscape/profiles`; None when neither variable is set.
pub fn user_profiles_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("memscape").join("profiles"))
}

/// A profile file of the user's directory, parsed or with the reason it could not be.
#[derive(Debug, Clone)]
pub struct UserProfile {
    pub path: PathBuf,
    pub profile: Result<Profile, String>,
}

impl UserProfile {
    /// What a menu shows: the profile's name, or the file's when it does not parse.
    pub fn title(&self) -> String {
        match &self.profile {
            Ok(p) => p.name.clone(),
            Err(_) => self
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        }
    }
}

/// The profiles in `dir` (see [`user_profiles_dir`]), sorted by file name.
pub fn user_profiles_in(dir: &Path) -> Vec<UserProfile> {
    load_profile_dir(dir)
        .into_iter()
        .map(|(path, profile)| UserProfile {
            path,
            profile: profile.map_err(|e| e.to_string()),
        })
        .collect()
}

/// The user's saved profiles (none when there is no configuration directory).
pub fn user_profiles() -> Vec<UserProfile> {
    user_profiles_dir()
        .map(|d| user_profiles_in(&d))
        .unwrap_or_default()
}

/// Whether `name` is a shipped profile's (those cannot be overwritten by a user profile).
pub fn is_shipped(name: &str) -> bool {
    SHIPPED_PROFILES.iter().any(|(n, _)| *n == name.trim())
}

/// A user profile by name in `dir`: the file `NAME.toml`, else the first file whose profile is
/// called `name`.
pub fn find_user_profile_in(dir: &Path, name: &str) -> Option<PathBuf> {
    let probe = Profile {
        name: name.to_owned(),
        description: String::new(),
        rules: Vec::new(),
    };
    let direct = dir.join(probe.file_name());
    if direct.is_file() {
        return Some(direct);
    }
    user_profiles_in(dir)
        .into_iter()
        .find(|u| u.profile.as_ref().is_ok_and(|p| p.name == name))
        .map(|u| u.path)
}

/// Where a profile shown by the pane came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProfileSource {
    Shipped(&'static str),
    User(PathBuf),
    /// Made in the editor and not saved yet.
    New,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_profiles_are_found_by_file_or_profile_name() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = Profile::shipped("hotspot").unwrap();
        p.name = "my hotspot".to_owned();
        let path = dir.path().join(p.file_name());
        p.save(&path).unwrap();
        assert_eq!(find_user_profile_in(dir.path(), "my hotspot"), Some(path));
        // A file renamed by hand is still found by the name inside it.
        let other = dir.path().join("renamed.toml");
        let mut q = p.clone();
        q.name = "other".to_owned();
        q.save(&other).unwrap();
        assert_eq!(find_user_profile_in(dir.path(), "other"), Some(other));
        assert_eq!(find_user_profile_in(dir.path(), "absent"), None);
        let listed = user_profiles_in(dir.path());
        assert_eq!(listed.len(), 2);
        assert_eq!(listed[0].title(), "my hotspot");
        assert!(is_shipped("hotspot") && !is_shipped("my hotspot"));
    }
}
