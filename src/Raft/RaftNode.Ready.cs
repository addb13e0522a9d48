namespace Courier.Raft;

/// <summary>What a member reports for monitoring (/raftz, STREAM.INFO's cluster block).</summary>
public sealed record RaftStatus(
    ulong Id, RaftRole Role, ulong Term, ulong Leader, ulong Commit, ulong Applied, ulong FirstIndex, ulong LastIndex,
    Configuration Configuration, IReadOnlyList<PeerStatus> Peers);

/// <summary>A leader's view of one member: how far it holds the log and whether it answered lately.</summary>
public sealed record PeerStatus(ulong Id, ulong Match, bool RecentActive, bool IsLearner);

public sealed partial class RaftNode
{
    private HardState CurrentHardState => new(Term, Vote, _log.Committed);

    /// <summary>True when <see cref="GetReady"/> has something for the host (and no Ready is out).</summary>
    public bool HasReady =>
        !_readyInFlight &&
        (_messages.Count > 0 || _earlyMessages.Count > 0 || _broadcastPending || _unstableSnapshot is not null ||
         _log.Stable < _log.LastIndex || CurrentHardState != _persistedHardState ||
         Math.Min(_log.Committed, _log.LastIndex) > Math.Max(_appliedPending, _log.SnapshotIndex));

    /// <summary>Takes what to send, persist and apply now (see <see cref="Ready"/> for the order); call <see cref="Advance"/> when done.</summary>
    public Ready GetReady()
    {
        if (_readyInFlight) throw new InvalidOperationException("the previous Ready was not advanced");
        if (_broadcastPending)
        {
            _broadcastPending = false;
            if (Role == RaftRole.Leader) BroadcastAppends();
        }
        var hard = CurrentHardState;
        var committed = _log.NextCommitted(_appliedPending);
        var ready = new Ready
        {
            HardState = hard != _persistedHardState ? hard : null,
            Snapshot = _unstableSnapshot,
            Entries = _log.Unstable(),
            CommittedEntries = committed,
            EarlyMessages = _earlyMessages.Count == 0 ? Ready.NoMessages : [.. _earlyMessages],
            Messages = _messages.Count == 0 ? Ready.NoMessages : [.. _messages],
        };
        _earlyMessages.Clear();
        _messages.Clear();
        if (committed.Length > 0) _appliedPending = committed[^1].Index;
        if (_unstableSnapshot is not null) _appliedPending = Math.Max(_appliedPending, _unstableSnapshot.Meta.Index);
        _readyInFlight = true;
        return ready;
    }

    /// <summary>The host persisted, sent and applied <paramref name="ready"/>.</summary>
    public void Advance(Ready ready)
    {
        if (!_readyInFlight) throw new InvalidOperationException("no Ready is out");
        _readyInFlight = false;
        if (ready.HardState is { } hard) _persistedHardState = hard;
        if (ready.Snapshot is { } snapshot)
        {
            if (ReferenceEquals(_unstableSnapshot, snapshot)) _unstableSnapshot = null;
            _log.AppliedTo(snapshot.Meta.Index);
        }
        if (ready.Entries.Length > 0)
        {
            var last = ready.Entries[^1];
            _log.StableTo(last.Index, last.Term);
        }
        if (ready.CommittedEntries.Length > 0) _log.AppliedTo(ready.CommittedEntries[^1].Index);
        if (Role == RaftRole.Leader) LeaderPersisted();
    }

    public RaftStatus GetStatus()
    {
        var peers = new List<PeerStatus>(_progress.Count);
        foreach (var (member, pr) in _progress)
            peers.Add(new PeerStatus(member, member == Id ? _log.Stable : pr.Match, member == Id || pr.RecentActive, pr.IsLearner));
        peers.Sort((a, b) => a.Id.CompareTo(b.Id));
        return new RaftStatus(Id, Role, Term, Leader, _log.Committed, _log.Applied, _log.FirstIndex, _log.LastIndex, _config, peers);
    }

    /// <summary>The entry at <paramref name="index"/> if the log still holds it (for invariant checks).</summary>
    internal bool TryGetEntry(ulong index, out Entry entry)
    {
        entry = default;
        if (index < _log.FirstIndex || index > _log.LastIndex) return false;
        entry = _log.At(index);
        return true;
    }

    public override string ToString() => $"raft {Id} {Role} t{Term} lead {Leader} commit {_log.Committed} last {_log.LastIndex}";
}
