//! Long series of numbered games (a ladder pairing's pairs, a handicap's games) played in
//! slices by independent jobs and merged by index.
//!
//! A series is stored as objects beside one another under one key prefix of a [`Store`] (a
//! directory, `file://` or `s3://`): `STEM.json`, the whole series as far as it goes, and
//! `STEM.part-A-B.json`, the games `[A, B)` stored by the job of one [`Shard`]. Game `i` is the same game whoever plays it (its opening and seeds come
//! from `i`), so the files merge by index, a slice already stored is never played again,
//! and a job that is killed loses at most the chunk it was playing.

use ninjazero_data::store::{Store, StoreError};
use std::ops::Range;

/// Job `index` of `count` jobs that share every series between them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// Shard `index` of `count`; refused unless `index < count`.
    pub fn new(index: usize, count: usize) -> Result<Shard, String> {
        if index >= count {
            return Err(format!(
                "shard {index} of {count}: the shard must be below the number of shards (0 to {})",
                count.saturating_sub(1)
            ));
        }
        Ok(Shard { index, count })
    }

    /// This shard's games of a series of `total`: contiguous, as even as whole games allow,
    /// and together the shards cover `0..total` exactly once.
    pub fn range(&self, total: usize) -> Range<usize> {
        let bound = |i: usize| i * total / self.count;
        bound(self.index)..bound(self.index + 1)
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "shard {} of {}", self.index, self.count)
    }
}

/// The key of the series `stem` under `dir` (a key prefix, empty for the store's root)
/// that stores the games of `part` (a shard's range), or the whole series from game 0 on.
pub fn slice_key(dir: &str, stem: &str, part: Option<&Range<usize>>) -> String {
    match part {
        Some(range) => under(
            dir,
            &format!("{stem}.part-{}-{}.json", range.start, range.end),
        ),
        None => under(dir, &format!("{stem}.json")),
    }
}

/// The key of `name` under the key prefix `dir`.
fn under(dir: &str, name: &str) -> String {
    match dir.trim_end_matches('/') {
        "" => name.to_string(),
        dir => format!("{dir}/{name}"),
    }
}

/// Every stored object of the series `stem` directly under `dir`: the whole series first,
/// then the parts in name order. A `dir` with nothing in it holds none.
pub fn slice_keys(store: &Store, dir: &str, stem: &str) -> Result<Vec<String>, StoreError> {
    let whole = slice_key(dir, stem, None);
    let part_prefix = under(dir, &format!("{stem}.part-"));
    let is_part = |key: &str| {
        key.strip_prefix(&part_prefix)
            .is_some_and(|rest| rest.ends_with(".json") && !rest.contains('/'))
    };
    let (mut found_whole, mut parts) = (false, Vec::new());
    for object in store.list(dir)? {
        if object.key == whole {
            found_whole = true;
        } else if is_part(&object.key) {
            parts.push(object.key);
        }
    }
    // `list` sorts by key, so the parts are in name order.
    Ok(found_whole
        .then_some(whole)
        .into_iter()
        .chain(parts)
        .collect())
}

/// The games of one series known so far, by index.
#[derive(Clone, Debug)]
pub struct Series<T> {
    games: Vec<Option<T>>,
}

impl<T: Clone> Series<T> {
    /// A series of `total` games, none known.
    pub fn new(total: usize) -> Series<T> {
        Series {
            games: vec![None; total],
        }
    }

    /// Adds stored games `first, first + 1, …`; games past the series' end are ignored (a
    /// longer series stored before), and a game already known keeps its first copy.
    pub fn insert(&mut self, first: usize, games: Vec<T>) {
        for (slot, game) in self.games.iter_mut().skip(first).zip(games) {
            slot.get_or_insert(game);
        }
    }

    /// How many games of `range` are known.
    pub fn known(&self, range: Range<usize>) -> usize {
        self.games[range].iter().filter(|g| g.is_some()).count()
    }

    /// Whether every game of the series is known.
    pub fn is_complete(&self) -> bool {
        self.games.iter().all(Option::is_some)
    }

    /// Every game of `range`, if all are known.
    pub fn games(&self, range: Range<usize>) -> Option<Vec<T>> {
        self.games[range].iter().cloned().collect()
    }

    /// Plays the missing games of `range` in order, at most `chunk` in a row at a time
    /// (`play(games)` returns them in order), and after each chunk calls `save(games)` with
    /// the known games from `range.start` on up to the first unknown one: playing in order,
    /// that prefix covers the chunk just played. Returns how many games were played.
    pub fn complete<E>(
        &mut self,
        range: Range<usize>,
        chunk: usize,
        play: &mut dyn FnMut(Range<usize>) -> Result<Vec<T>, E>,
        save: &mut dyn FnMut(Vec<T>) -> Result<(), E>,
    ) -> Result<usize, E> {
        let mut played = 0;
        let mut next = range.start;
        while let Some(start) = (next..range.end).find(|&i| self.games[i].is_none()) {
            let end = (start..range.end)
                .find(|&i| self.games[i].is_some())
                .unwrap_or(range.end)
                .min(start + chunk.max(1));
            let games = play(start..end)?;
            played += games.len();
            self.insert(start, games);
            let prefix: Vec<T> = self.games[range.start..range.end]
                .iter()
                .map_while(Clone::clone)
                .collect();
            save(prefix)?;
            next = end;
        }
        Ok(played)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_cover_the_series_once() {
        for total in [0, 1, 7, 64] {
            for count in [1, 2, 3, 10] {
                let covered: Vec<usize> = (0..count)
                    .flat_map(|i| Shard::new(i, count).unwrap().range(total))
                    .collect();
                assert_eq!(covered, (0..total).collect::<Vec<_>>(), "{total} / {count}");
            }
        }
        assert!(Shard::new(4, 4).unwrap_err().contains("0 to 3"));
        assert!(Shard::new(0, 0).is_err());
    }

    #[test]
    fn completing_plays_only_the_gaps_and_saves_each_prefix() {
        let mut series: Series<usize> = Series::new(10);
        series.insert(3, vec![3, 4]);
        series.insert(8, vec![8, 9, 10, 11]);
        let (mut asked, mut saved) = (Vec::new(), Vec::new());
        let played = series
            .complete::<()>(
                0..10,
                2,
                &mut |games| {
                    asked.push(games.clone());
                    Ok(games.collect())
                },
                &mut |prefix| {
                    saved.push(prefix.len());
                    Ok(())
                },
            )
            .unwrap();
        assert_eq!(played, 6);
        assert_eq!(asked, [0..2, 2..3, 5..7, 7..8]);
        assert_eq!(saved, [2, 5, 7, 10]);
        assert_eq!(series.games(0..10), Some((0..10).collect()));
        assert!(series.is_complete());
    }

    #[test]
    fn stored_objects_are_the_whole_series_then_its_parts() {
        let dir = ninjazero_testkit::temp_dir();
        let store = Store::open(dir.path().to_str().unwrap()).unwrap();
        assert!(slice_keys(&store, "none", "a").unwrap().is_empty());
        let keys = [
            slice_key("m", "a", Some(&(4..8))),
            slice_key("m", "a", Some(&(0..4))),
            slice_key("m/", "a", None),
            "m/ab.json".to_string(),
            "m/round-1/a.json".to_string(),
            slice_key("", "a", None),
        ];
        for key in &keys {
            store.put_new(key, Vec::new()).unwrap();
        }
        assert_eq!(
            slice_keys(&store, "m", "a").unwrap(),
            ["m/a.json", "m/a.part-0-4.json", "m/a.part-4-8.json"]
        );
        assert_eq!(slice_keys(&store, "", "a").unwrap(), ["a.json"]);
    }
}
