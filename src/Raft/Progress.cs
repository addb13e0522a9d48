namespace Courier.Raft;

/// <summary>How a leader is replicating to one follower.</summary>
internal enum ReplicationState : byte
{
    /// <summary>One append at a time until the follower says where the logs agree.</summary>
    Probe,
    /// <summary>Appends stream optimistically, up to the in-flight limit.</summary>
    Replicate,
    /// <summary>A snapshot is on its way; appends wait for it.</summary>
    Snapshot,
}

/// <summary>A leader's view of one member (etcd/raft's tracker.Progress).</summary>
internal sealed class Progress
{
    public Progress(ulong next, bool isLearner)
    {
        Next = next;
        IsLearner = isLearner;
    }

    public ulong Match { get; set; }
    public ulong Next { get; set; }
    public ReplicationState State { get; private set; } = ReplicationState.Probe;
    public bool IsLearner { get; set; }

    /// <summary>Probe: an append is out and unanswered.</summary>
    public bool ProbeSent { get; set; }

    /// <summary>Snapshot: the index of the snapshot on its way.</summary>
    public ulong PendingSnapshot { get; private set; }

    /// <summary>Ticks since the snapshot was sent (a lost one is sent again).</summary>
    public int SnapshotTicks { get; set; }

    /// <summary>Heard from since the last quorum check.</summary>
    public bool RecentActive { get; set; }

    /// <summary>Last index of each append in flight, oldest first.</summary>
    private readonly Queue<ulong> _inflight = new();

    public int Inflight => _inflight.Count;

    public bool IsPaused(int maxInflight) => State switch
    {
        ReplicationState.Probe => ProbeSent,
        ReplicationState.Replicate => _inflight.Count >= maxInflight,
        _ => true,
    };

    /// <summary>
    /// The follower lost entries it had acknowledged (a damaged log, <see cref="RaftMessage.Repairing"/>): its match
    /// goes back to <paramref name="last"/>, its last index now, and it is probed from there. Raft otherwise never
    /// lowers a match, and would take every rejection below it for a stale one.
    /// </summary>
    public void LostEntries(ulong last)
    {
        Match = last;
        Reset(ReplicationState.Probe);
        Next = last + 1;
    }

    public void BecomeProbe()
    {
        if (State == ReplicationState.Snapshot)
        {
            var pending = PendingSnapshot;
            Reset(ReplicationState.Probe);
            Next = Math.Max(Match + 1, pending + 1);
        }
        else
        {
            Reset(ReplicationState.Probe);
            Next = Match + 1;
        }
    }

    public void BecomeReplicate()
    {
        Reset(ReplicationState.Replicate);
        Next = Match + 1;
    }

    public void BecomeSnapshot(ulong snapshotIndex)
    {
        Reset(ReplicationState.Snapshot);
        PendingSnapshot = snapshotIndex;
    }

    private void Reset(ReplicationState state)
    {
        State = state;
        ProbeSent = false;
        PendingSnapshot = 0;
        SnapshotTicks = 0;
        _inflight.Clear();
    }

    /// <summary>An append up to <paramref name="last"/> left.</summary>
    public void Sent(ulong last)
    {
        switch (State)
        {
            case ReplicationState.Replicate:
                if (last >= Next)
                {
                    Next = last + 1;
                    _inflight.Enqueue(last);
                }
                break;
            case ReplicationState.Probe:
                ProbeSent = true;
                break;
        }
    }

    /// <summary>The follower holds everything up to <paramref name="index"/>; false when that is old news.</summary>
    public bool MaybeUpdate(ulong index)
    {
        var updated = false;
        if (Match < index)
        {
            Match = index;
            updated = true;
            ProbeSent = false;
        }
        if (Next < index + 1) Next = index + 1;
        while (_inflight.Count > 0 && _inflight.Peek() <= index) _inflight.Dequeue();
        return updated;
    }

    /// <summary>
    /// The follower rejected an append after <paramref name="rejected"/>, hinting
    /// <paramref name="hint"/>; false when the rejection is stale.
    /// </summary>
    public bool MaybeDecreaseTo(ulong rejected, ulong hint)
    {
        if (State == ReplicationState.Replicate)
        {
            // Only a rejection of something after what it already matched means anything.
            if (rejected <= Match) return false;
            BecomeProbe();
            Next = Math.Max(Match + 1, Math.Min(rejected, hint + 1));
            return true;
        }
        // Probe: only the answer to the probe in flight counts.
        if (Next - 1 != rejected) return false;
        Next = Math.Max(Math.Min(rejected, hint + 1), 1);
        if (Next <= Match) Next = Match + 1;
        ProbeSent = false;
        return true;
    }

    /// <summary>Frees the oldest in-flight slot (a heartbeat answered while the window is full: an append was probably lost).</summary>
    public void FreeOldest()
    {
        if (_inflight.Count > 0) _inflight.Dequeue();
    }

    public override string ToString() => $"{State} match {Match} next {Next}{(IsLearner ? " learner" : "")}";
}
