using Courier.Protocols.JetStream;

namespace Courier.Storage.Internal;

/// <summary>
/// Per-message TTLs (<c>allow_msg_ttl</c>, nats-server 2.11): an index of the messages with a <c>Nats-TTL</c>
/// by expiry (nats-server keeps a hash wheel, <c>thw</c>), and the set of those that never expire (they
/// outlive max_age). In memory only: a FileStore rebuilds both when it opens, from the records' headers.
/// </summary>
/// <remarks>
/// Entries are not taken out when their message goes (a removal does not read headers): an entry whose
/// sequence no longer holds a live message stored at its time is dropped when the index next reaches it.
/// </remarks>
internal abstract partial class StoreCore
{
    private readonly SortedSet<(long Expires, ulong Seq, long Timestamp)> _ttls = [];
    private readonly HashSet<ulong> _neverExpire = [];

    /// <inheritdoc/>
    public IReadOnlyList<TtlExpiry> ExpiredByTtl(long now, int max)
    {
        lock (StateLock)
        {
            ThrowIfClosed();
            List<TtlExpiry>? expired = null;
            List<(long, ulong, long)>? stale = null;
            foreach (var entry in _ttls)
            {
                if (entry.Expires > now || (expired?.Count ?? 0) >= max)
                {
                    break;
                }

                if (!IsLive(entry.Seq) || _slots[entry.Seq].Timestamp != entry.Timestamp)
                {
                    (stale ??= []).Add(entry);
                    continue;
                }

                (expired ??= []).Add(new TtlExpiry(entry.Seq, _subjects[_slots[entry.Seq].SubjectId]!.Text, entry.Expires));
            }

            foreach (var entry in stale ?? [])
            {
                _ttls.Remove(entry);
            }

            return expired ?? (IReadOnlyList<TtlExpiry>)[];
        }
    }

    /// <inheritdoc/>
    public IReadOnlyList<TtlExpiry> AgedOut(long now, int max)
    {
        lock (StateLock)
        {
            ThrowIfClosed();
            var maxAge = _config.MaxAge;
            if (maxAge <= TimeSpan.Zero || _msgs == 0)
            {
                return [];
            }

            var oldest = now - (maxAge.Ticks * 100); // TimeSpan ticks are 100 ns
            List<TtlExpiry>? aged = null;
            for (var seq = _first; seq <= _last && (aged?.Count ?? 0) < max; seq++)
            {
                if (!IsLive(seq) || NeverExpires(seq))
                {
                    continue;
                }

                var slot = _slots[seq];
                if (slot.Timestamp > oldest)
                {
                    break;
                }

                (aged ??= []).Add(new TtlExpiry(seq, _subjects[slot.SubjectId]!.Text, slot.Timestamp + (maxAge.Ticks * 100)));
            }

            return aged ?? (IReadOnlyList<TtlExpiry>)[];
        }
    }

    /// <summary>Notes a new message's TTL when it has one (lock held).</summary>
    private void TrackTtl(ulong seq, long timestamp, ReadOnlySpan<byte> headers)
    {
        if (!MessageTtl.TryRead(headers, out var seconds) || seconds == 0)
        {
            return; // none, or invalid: the stream refuses those before they reach the store
        }

        if (seconds == MessageTtl.Never)
        {
            _neverExpire.Add(seq);
        }
        else
        {
            _ttls.Add((MessageTtl.Expiry(timestamp, seconds), seq, timestamp));
        }
    }

    /// <summary>Whether a live message at <paramref name="seq"/> never expires (lock held).</summary>
    private bool NeverExpires(ulong seq) => _neverExpire.Count > 0 && _neverExpire.Contains(seq);

    /// <summary>Every message gone (lock held).</summary>
    private void ClearTtls()
    {
        _ttls.Clear();
        _neverExpire.Clear();
    }

    /// <summary>
    /// Recovery (FileStore, lock held): the TTL index from the stored messages' headers. Reads every live
    /// record once when the stream allows TTLs; nothing otherwise.
    /// </summary>
    protected void RebuildTtlIndexLocked()
    {
        ClearTtls();
        if (!_config.AllowMsgTtl || _msgs == 0)
        {
            return;
        }

        for (var seq = _first; seq <= _last; seq++)
        {
            if (!_slots.Contains(seq) || !_slots[seq].IsLive)
            {
                continue;
            }

            var slot = _slots[seq];
            if (ReadRecord(seq, slot, _subjects[slot.SubjectId]!) is { Headers.IsEmpty: false } message)
            {
                TrackTtl(seq, slot.Timestamp, message.Headers.Span);
            }
        }
    }
}
