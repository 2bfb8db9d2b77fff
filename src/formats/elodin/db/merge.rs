//! The merge of the DB's streams by time, ties in channel order: the order of a binary heap
//! of `(time, channel)`, at a fraction of its cost on an Elodin DB. Elodin stamps every
//! component of a tick with the same timestamp, so the streams come in ticks: the channels
//! whose next row is at one time are a list walked in channel order, and each channel
//! served goes into the list of its next time (most often one list: the next tick's),
//! instead of a sift through a heap of every stream per row.

use std::collections::BTreeMap;

use crate::model::ChannelId;

#[derive(Default)]
pub struct Merge {
    /// The tick being served: its time, its channels in channel order, the position of
    /// the one served next, and that one's next time (the tick's, or earlier when its
    /// index goes back).
    time: i64,
    tick: Vec<ChannelId>,
    at: usize,
    top: i64,
    /// Later ticks by time; every time here is after `time`.
    later: BTreeMap<i64, Vec<ChannelId>>,
    /// The channels pushed last, all at one time, not yet in `later`: a tick's channels
    /// all go to the next tick, so most pushes are a vector's.
    pushed: (i64, Vec<ChannelId>),
    /// Lists of served ticks, kept for the ticks to come.
    spare: Vec<Vec<ChannelId>>,
}

impl Merge {
    /// Adds channel `ch` whose next row is at `us`; `ch` is not in the merge.
    pub fn push(&mut self, us: i64, ch: ChannelId) {
        if us != self.pushed.0 {
            self.settle();
            self.pushed.0 = us;
        }
        self.pushed.1.push(ch);
    }

    /// Moves the channels pushed last into `later`.
    fn settle(&mut self) {
        let (us, pushed) = &mut self.pushed;
        if pushed.is_empty() {
            return;
        }
        match self.later.get_mut(us) {
            Some(tick) => tick.append(pushed),
            None => {
                let fresh = self.spare.pop().unwrap_or_default();
                self.later.insert(*us, std::mem::replace(pushed, fresh));
            }
        }
    }

    /// The next channel to serve and its next row's time.
    pub fn peek(&mut self) -> Option<(i64, ChannelId)> {
        if self.at >= self.tick.len() {
            self.settle();
            let (time, mut tick) = self.later.pop_first()?;
            // A list filled from several earlier ticks may be out of channel order.
            if !tick.is_sorted() {
                tick.sort_unstable();
            }
            let mut served = std::mem::replace(&mut self.tick, tick);
            served.clear();
            self.spare.push(served);
            self.time = time;
            self.top = time;
            self.at = 0;
        }
        Some((self.top, self.tick[self.at]))
    }

    /// The channel [`Merge::peek`] gave was served; `next` is its next row's time (`None`:
    /// it has no more). A time not after the tick's keeps it first, as in the heap: it
    /// is the smallest `(time, channel)` left.
    pub fn served(&mut self, next: Option<i64>) {
        let Some(&ch) = self.tick.get(self.at) else {
            return;
        };
        match next {
            Some(us) if us <= self.time => self.top = us,
            Some(us) => {
                self.at += 1;
                self.top = self.time;
                self.push(us, ch);
            }
            None => {
                self.at += 1;
                self.top = self.time;
            }
        }
    }

    /// Leaves out the channels `keep` refuses.
    pub fn retain(&mut self, keep: impl Fn(ChannelId) -> bool) {
        self.settle();
        let at = self.at;
        let current_kept = self.tick.get(at).is_some_and(|&ch| keep(ch));
        let mut i = 0;
        // The served part of the tick stays as it is: only what is left to serve counts.
        self.tick.retain(|&ch| {
            i += 1;
            i <= at || keep(ch)
        });
        if !current_kept {
            // The one served next is another: it is at the tick's time.
            self.top = self.time;
        }
        for tick in self.later.values_mut() {
            tick.retain(|&ch| keep(ch));
        }
        self.later.retain(|_, tick| !tick.is_empty());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    /// Serves every stream (a list of times per channel) through the merge.
    fn merged(streams: &[Vec<i64>]) -> Vec<(i64, ChannelId)> {
        let mut merge = Merge::default();
        let mut next = vec![0; streams.len()];
        for (ch, s) in streams.iter().enumerate() {
            if let Some(&t) = s.first() {
                merge.push(t, ch as ChannelId);
            }
        }
        let mut out = Vec::new();
        while let Some((t, ch)) = merge.peek() {
            out.push((t, ch));
            let c = ch as usize;
            next[c] += 1;
            merge.served(streams[c].get(next[c]).copied());
        }
        out
    }

    /// The same through a heap of `(time, channel)`, replacing its top.
    fn by_heap(streams: &[Vec<i64>]) -> Vec<(i64, ChannelId)> {
        let mut heap = BinaryHeap::new();
        let mut next = vec![0; streams.len()];
        for (ch, s) in streams.iter().enumerate() {
            if let Some(&t) = s.first() {
                heap.push(Reverse((t, ch as ChannelId)));
            }
        }
        let mut out = Vec::new();
        while let Some(Reverse((t, ch))) = heap.pop() {
            out.push((t, ch));
            let c = ch as usize;
            next[c] += 1;
            if let Some(&t) = streams[c].get(next[c]) {
                heap.push(Reverse((t, ch)));
            }
        }
        out
    }

    #[test]
    fn serves_in_the_heap_order() {
        let cases: Vec<Vec<Vec<i64>>> = vec![
            // Ticks, two rates, a torn tick.
            vec![vec![0, 10, 20, 30], vec![0, 10, 20], vec![0, 20]],
            // Repeated times, an index going back, channels joining late.
            vec![
                vec![5, 5, 5, 7],
                vec![3, 9, 1, 2, 9],
                vec![],
                vec![9, 9],
                vec![1, 8, 8],
            ],
            // No two alike.
            vec![vec![1, 4, 7], vec![2, 5, 8], vec![3, 6, 9]],
        ];
        for streams in cases {
            assert_eq!(merged(&streams), by_heap(&streams), "{streams:?}");
        }
        // Every small combination of three streams of up to three times in 0..3.
        let mut all: Vec<Vec<i64>> = Vec::new();
        for n in 0..=3usize {
            for code in 0..3usize.pow(n as u32) {
                all.push(
                    (0..n)
                        .map(|k| ((code / 3usize.pow(k as u32)) % 3) as i64)
                        .collect(),
                );
            }
        }
        for a in &all {
            for b in &all {
                for c in &all {
                    let streams = vec![a.clone(), b.clone(), c.clone()];
                    assert_eq!(merged(&streams), by_heap(&streams), "{streams:?}");
                }
            }
        }
    }

    #[test]
    fn retain_leaves_channels_out() {
        let mut merge = Merge::default();
        for ch in 0..4 {
            merge.push(0, ch);
        }
        merge.push(5, 9);
        assert_eq!(merge.peek(), Some((0, 0)));
        merge.served(Some(3));
        merge.retain(|ch| ch != 2 && ch != 9);
        let mut out = Vec::new();
        while let Some((t, ch)) = merge.peek() {
            out.push((t, ch));
            merge.served(None);
        }
        assert_eq!(out, vec![(0, 1), (0, 3), (3, 0)]);
    }
}
