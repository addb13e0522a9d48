namespace Courier.Raft;

public sealed partial class RaftNode
{
    /// <summary>
    /// Appends a command to the log if this member leads (and is not handing leadership over).
    /// The command is committed when an entry at <paramref name="index"/> with <paramref name="term"/>
    /// comes out in <see cref="Ready.CommittedEntries"/>; an entry there with another term means it was lost.
    /// </summary>
    public bool Propose(ReadOnlyMemory<byte> data, out ulong index, out ulong term)
    {
        index = 0;
        term = Term;
        if (Role != RaftRole.Leader || _leadTransferee != 0) return false;
        index = _log.LastIndex + 1;
        _log.Append(new Entry(Term, index, EntryType.Normal, data));
        _broadcastPending = true;
        return true;
    }

    /// <summary>
    /// Proposes one membership change. Refused (false) unless this member leads, has committed an
    /// entry of its own term, and no other change is still uncommitted.
    /// </summary>
    public bool ProposeConfChange(ConfChange change, out ulong index)
    {
        index = 0;
        if (Role != RaftRole.Leader || _leadTransferee != 0 || change.Node == 0) return false;
        if (_log.Committed < _noopIndex || _configIndex > _log.Committed) return false;
        var next = _config.Apply(change);
        if (next.Voters.Length == 0) return false; // a group needs a voter
        index = _log.LastIndex + 1;
        _log.Append(new Entry(Term, index, EntryType.ConfChange, change.Encode()));
        SetConfiguration(next, index);
        _broadcastPending = true;
        return true;
    }

    /// <summary>Hands leadership to <paramref name="to"/> (§3.10): brings it up to date, then tells it to campaign at once. Proposals are refused meanwhile; abandoned after an election timeout.</summary>
    public bool TransferLeadership(ulong to)
    {
        if (Role != RaftRole.Leader || to == Id || !_config.IsVoter(to) || !_progress.TryGetValue(to, out var pr)) return false;
        if (_leadTransferee == to) return true;
        _leadTransferee = to;
        _electionElapsed = 0;
        if (pr.Match == _log.LastIndex) Send(new RaftMessage { From = Id, Term = Term, Type = MessageType.TimeoutNow, To = to });
        else SendAppends(to, pr);
        return true;
    }

    private void TickLeader()
    {
        _heartbeatElapsed++;
        _electionElapsed++;
        if (_electionElapsed >= _options.ElectionTicks)
        {
            _electionElapsed = 0;
            _leadTransferee = 0; // a transfer that did not finish within an election timeout is abandoned
            if (_options.CheckQuorum && !QuorumActive())
            {
                BecomeFollower(Term, 0); // §6.2: cut off from a quorum, stop answering as leader
                return;
            }
        }
        foreach (var pr in _progress.Values)
            if (pr.State == ReplicationState.Snapshot) pr.SnapshotTicks++;
        if (_heartbeatElapsed >= _options.HeartbeatTicks)
        {
            _heartbeatElapsed = 0;
            foreach (var (member, pr) in _progress)
            {
                if (member == Id) continue;
                Send(new RaftMessage { From = Id, Term = Term, Type = MessageType.Heartbeat, To = member, Commit = Math.Min(pr.Match, _log.Committed) });
            }
        }
    }

    private bool QuorumActive()
    {
        var active = 0;
        foreach (var (member, pr) in _progress)
        {
            if (member == Id)
            {
                if (_config.IsVoter(Id)) active++;
                continue;
            }
            if (pr.RecentActive && _config.IsVoter(member)) active++;
            pr.RecentActive = false;
        }
        return active >= _config.Quorum;
    }

    private void StepLeader(RaftMessage m)
    {
        if (!_progress.TryGetValue(m.From, out var pr)) return;
        switch (m.Type)
        {
            case MessageType.AppendResponse:
                pr.RecentActive = true;
                if (m.Reject)
                {
                    if (m.Repairing && pr.Match > m.RejectHint) pr.LostEntries(m.RejectHint); // it no longer holds what it acknowledged
                    // The follower's hint, then our own log: skip whole terms at once.
                    var next = m.LogTerm > 0 ? _log.FindConflictByTerm(m.RejectHint, m.LogTerm) : m.RejectHint;
                    if (pr.MaybeDecreaseTo(m.Index, next)) SendAppends(m.From, pr);
                    return;
                }
                var wasPaused = pr.IsPaused(_options.MaxInflightMessages);
                if (!pr.MaybeUpdate(m.Index))
                {
                    if (wasPaused && !pr.IsPaused(_options.MaxInflightMessages)) SendAppends(m.From, pr);
                    return;
                }
                if (pr.State == ReplicationState.Probe || (pr.State == ReplicationState.Snapshot && pr.Match >= pr.PendingSnapshot))
                    pr.BecomeReplicate();
                if (MaybeCommit()) Committed();
                else SendAppends(m.From, pr);
                if (m.From == _leadTransferee && pr.Match == _log.LastIndex)
                    Send(new RaftMessage { From = Id, Term = Term, Type = MessageType.TimeoutNow, To = m.From });
                break;
            case MessageType.HeartbeatResponse:
                pr.RecentActive = true;
                pr.ProbeSent = false;
                if (m.Repairing && pr.Match > m.Index) pr.LostEntries(m.Index); // restarted with a damaged log: resend from its last index
                if (pr.State == ReplicationState.Replicate && pr.IsPaused(_options.MaxInflightMessages)) pr.FreeOldest();
                if (pr.State == ReplicationState.Snapshot && pr.SnapshotTicks >= 2 * _options.ElectionTicks) pr.BecomeProbe(); // the snapshot was lost
                if (pr.Match < _log.LastIndex) SendAppends(m.From, pr);
                break;
        }
    }

    /// <summary>§5.3, §5.4.2: the highest index a quorum of voters holds durably, if its entry is of this term.</summary>
    private bool MaybeCommit()
    {
        var voters = _config.Voters;
        Span<ulong> matches = voters.Length <= 16 ? stackalloc ulong[voters.Length] : new ulong[voters.Length];
        for (var i = 0; i < voters.Length; i++)
            matches[i] = _progress.TryGetValue(voters[i], out var pr) ? pr.Match : 0;
        matches.Sort();
        var quorumIndex = matches[voters.Length - _config.Quorum];
        if (quorumIndex <= _log.Committed || _log.TermOrZero(quorumIndex) != Term) return false;
        _log.CommitTo(quorumIndex);
        return true;
    }

    private void BroadcastAppends()
    {
        foreach (var (member, pr) in _progress)
            if (member != Id) SendAppends(member, pr);
    }

    /// <summary>Sends what the follower lacks: one probe, or appends up to the in-flight window, or the snapshot.</summary>
    private void SendAppends(ulong to, Progress pr)
    {
        if (!SendAppend(to, pr, sendIfEmpty: true)) return;
        while (pr.State == ReplicationState.Replicate && pr.Next <= _log.LastIndex && SendAppend(to, pr, sendIfEmpty: false)) { }
    }

    private bool SendAppend(ulong to, Progress pr, bool sendIfEmpty)
    {
        if (pr.IsPaused(_options.MaxInflightMessages)) return false;
        var prevIndex = pr.Next - 1;
        if (!_log.TryTerm(prevIndex, out var prevTerm))
        {
            // The follower needs entries we compacted: it gets the snapshot.
            if (_snapshot is null) return false;
            Send(new RaftMessage { From = Id, Term = Term, Type = MessageType.Snapshot, To = to, Snapshot = _snapshot });
            pr.BecomeSnapshot(_snapshot.Meta.Index);
            return false;
        }
        var entries = pr.Next <= _log.LastIndex ? _log.Slice(pr.Next, _log.LastIndex, _options.MaxBytesPerMessage) : [];
        if (entries.Length == 0 && !sendIfEmpty) return false;
        Send(new RaftMessage { From = Id, Term = Term, Type = MessageType.Append, To = to, Index = prevIndex, LogTerm = prevTerm, Entries = entries, Commit = _log.Committed });
        pr.Sent(entries.Length > 0 ? entries[^1].Index : prevIndex);
        return true;
    }

    /// <summary>After the leader's own write: it holds its entries durably now, which may commit some.</summary>
    private void LeaderPersisted()
    {
        if (_progress.TryGetValue(Id, out var self)) self.MaybeUpdate(_log.Stable);
        if (MaybeCommit()) Committed();
    }

    /// <summary>The commit advanced: followers hear of it at once.</summary>
    private void Committed()
    {
        BroadcastAppends();
        // A leader that removed itself leads until the removal is committed (dissertation §4.2.2).
        if (!_config.IsVoter(Id) && _configIndex <= _log.Committed) BecomeFollower(Term, 0);
    }
}
