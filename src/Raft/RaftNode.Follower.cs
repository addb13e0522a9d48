namespace Courier.Raft;

public sealed partial class RaftNode
{
    private void StepFollower(RaftMessage m)
    {
        switch (m.Type)
        {
            case MessageType.Append:
                Leader = m.From;
                _electionElapsed = 0;
                HandleAppend(m);
                break;
            case MessageType.Heartbeat:
                Leader = m.From;
                _electionElapsed = 0;
                // The leader only sends a commit this member is known to hold (its match).
                _log.CommitTo(Math.Min(m.Commit, _log.LastIndex));
                Send(new RaftMessage { From = Id, Term = Term, Type = MessageType.HeartbeatResponse, To = m.From, Repairing = _repairFloor != 0, Index = _repairFloor != 0 ? _log.LastIndex : 0 });
                break;
            case MessageType.Snapshot:
                Leader = m.From;
                _electionElapsed = 0;
                HandleSnapshot(m);
                break;
            case MessageType.TimeoutNow:
                // §3.10: the leader chose us; campaign now, skipping the pre-vote and the voters' leases.
                Campaign(pre: false, transfer: true);
                break;
        }
    }

    private void HandleAppend(RaftMessage m)
    {
        if (m.Index < _log.Committed)
        {
            Send(new RaftMessage { From = Id, Term = Term, Type = MessageType.AppendResponse, To = m.From, Index = _log.Committed });
            return;
        }
        if (_log.TryAppend(m.Index, m.LogTerm, m.Entries, m.Commit, out var lastNew, out var truncated))
        {
            if (truncated || HasConfChange(m.Entries)) RebuildConfiguration(); // the latest configuration in the log rules
            LiftRepairFloor();
            Send(new RaftMessage { From = Id, Term = Term, Type = MessageType.AppendResponse, To = m.From, Index = lastNew, Repairing = _repairFloor != 0 });
            return;
        }
        // Our log does not hold (m.Index, m.LogTerm): hint the last index whose term is at most the
        // leader's there, with its term, so the leader can skip whole terms (etcd/raft's findConflictByTerm).
        var hint = _log.FindConflictByTerm(Math.Min(m.Index, _log.LastIndex), m.LogTerm);
        Send(new RaftMessage
        {
            From = Id,
            Term = Term,
            Type = MessageType.AppendResponse,
            To = m.From,
            Index = m.Index,
            Reject = true,
            RejectHint = hint,
            Repairing = _repairFloor != 0,
            LogTerm = _log.TermOrZero(hint),
        });
    }

    private static bool HasConfChange(Entry[] entries)
    {
        foreach (var entry in entries)
            if (entry.Type == EntryType.ConfChange) return true;
        return false;
    }

    private void HandleSnapshot(RaftMessage m)
    {
        var snapshot = m.Snapshot!;
        var meta = snapshot.Meta;
        if (meta.Index <= _log.Committed)
        {
            Send(new RaftMessage { From = Id, Term = Term, Type = MessageType.AppendResponse, To = m.From, Index = _log.Committed });
            return;
        }
        if (_log.MatchTerm(meta.Index, meta.Term))
        {
            // We hold the snapshot's last entry: everything up to it is committed, nothing to install.
            _log.CommitTo(meta.Index);
            Send(new RaftMessage { From = Id, Term = Term, Type = MessageType.AppendResponse, To = m.From, Index = meta.Index });
            return;
        }
        _log.Restore(meta);
        _snapshot = snapshot;
        _unstableSnapshot = snapshot;
        SetConfiguration(meta.Configuration, 0);
        LiftRepairFloor();
        Send(new RaftMessage { From = Id, Term = Term, Type = MessageType.AppendResponse, To = m.From, Index = meta.Index });
    }
}
