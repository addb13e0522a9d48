using System.Buffers.Binary;
using System.Text;
using Akka.Actor;
using Courier.Actors.Connections;
using Courier.Protocols;
using Courier.Protocols.JetStream;
using Courier.Protocols.Nats;
using Courier.Storage;

namespace Courier.Actors.JetStream;

/// <summary>
/// Per-message TTLs and subject delete markers (nats-server 2.11, ADR-43). The store lists the messages whose
/// <c>Nats-TTL</c> has run out (<see cref="IStreamStore.ExpiredByTtl"/>), and with <c>subject_delete_marker_ttl</c>
/// those past max_age (<see cref="IStreamStore.AgedOut"/>); this tick removes them, or, where one was its
/// subject's last message, stores a delete marker in its place (<c>Nats-Marker-Reason: MaxAge</c>, a
/// <c>Nats-TTL</c> of the marker TTL, <c>Nats-Rollup: sub</c>, which removes it), as nats-server's expireMsgs
/// and handleRemovalOrSdm. A replicated stream's leader decides by its clock and puts each removal (an
/// Expired entry) and each marker (a Messages entry) through the log, so every replica applies the same;
/// followers never expire messages themselves (nats-server's clustered rmcb / pmsgcb).
/// </summary>
internal sealed partial class StreamActor
{
    private const byte ExpiredEntry = 7;

    /// <summary>How often expired messages are looked for (nats-server fires its expiry timer at most every 250 ms).</summary>
    private static readonly TimeSpan TtlCheckInterval = TimeSpan.FromMilliseconds(250);

    /// <summary>The most messages one tick expires (the rest wait for the next).</summary>
    private const int MaxExpiriesPerTick = 1024;

    /// <summary>How long a leader waits for a removal it proposed before it proposes it again (the proposal was lost).</summary>
    private static readonly TimeSpan ExpiryRetry = TimeSpan.FromSeconds(10);

    /// <summary>A replicated stream's leader: removals and markers proposed and not yet applied, by the sequence they replace.</summary>
    private readonly Dictionary<ulong, (string Subject, DateTime Proposed)> _expiryProposed = [];

    /// <summary>Starts (or stops) the expiry tick as the configuration asks.</summary>
    private void ScheduleTtlExpiry()
    {
        // A replicated stream's max_age is this tick's too: its leader decides what aged out and the removals go
        // through the log, so every replica removes the same messages (each replica's own clock would not agree).
        if (_config.AllowMsgTtl || _config.SubjectDeleteMarkerTtl > 0 || (_replication is not null && _config.MaxAge > 0))
        {
            Timers.StartPeriodicTimer("ttl", Protocol.ExpireByTtl.Instance, TtlCheckInterval);
        }
        else
        {
            Timers.Cancel("ttl");
        }
    }

    private void ExpireByTtl()
    {
        if (!Leading)
        {
            _expiryProposed.Clear();
            return;
        }

        var now = (DateTime.UtcNow - DateTime.UnixEpoch).Ticks * 100;
        var expired = _config.AllowMsgTtl ? _store.ExpiredByTtl(now, MaxExpiriesPerTick) : [];
        var markers = _config.SubjectDeleteMarkerTtl > 0;
        if ((markers || _replication is not null) && _config.MaxAge > 0)
        {
            var aged = _store.AgedOut(now, MaxExpiriesPerTick);
            if (aged.Count > 0)
            {
                expired = [.. expired, .. aged];
            }
        }

        ForgetAppliedExpiries();
        if (expired.Count == 0)
        {
            return;
        }

        var removed = new List<ulong>();
        var stored = false;
        foreach (var expiry in expired.OrderBy(e => e.Sequence).DistinctBy(e => e.Sequence))
        {
            if (_expiryProposed.ContainsKey(expiry.Sequence))
            {
                continue;
            }

            var marker = markers && IsLastOfSubject(expiry);
            if (_replication is not null)
            {
                _expiryProposed[expiry.Sequence] = (expiry.Subject, DateTime.UtcNow);
                if (marker)
                {
                    ProposeMarker(expiry.Subject);
                }
                else
                {
                    removed.Add(expiry.Sequence);
                }
            }
            else if (marker)
            {
                // The marker rolls the subject up: the expired message goes with it.
                stored |= AppendChecked(new InternalMessage(expiry.Subject, null, MarkerHeaders(), []), out var result) is null && result.Ok;
            }
            else
            {
                _store.RemoveMessage(expiry.Sequence);
            }
        }

        if (_replication is not null)
        {
            if (removed.Count > 0)
            {
                ProposeExpired(removed);
            }

            return;
        }

        _store.Flush();
        if (stored)
        {
            foreach (var consumer in _consumers.Actors)
            {
                consumer.Tell(ConsumerActor.Protocol.NewMessages.Instance);
            }

            _streams.Notify(_config.Name);
            SendRepublished();
        }
    }

    /// <summary>
    /// Whether removing <paramref name="expiry"/> leaves its subject without messages, and it is not a marker
    /// itself (nats-server's shouldProcessSdm and isSubjectDeleteMarker): then a marker takes its place.
    /// </summary>
    private bool IsLastOfSubject(TtlExpiry expiry)
    {
        if (_store.LoadMessage(expiry.Sequence) is not { Found: true, Message: { } message } || IsDeleteMarker(message.Headers.Span))
        {
            return false;
        }

        var msgs = _store.SubjectsState(expiry.Subject).TryGetValue(expiry.Subject, out var state) ? state.Msgs : 0;
        ulong pending = 0;
        foreach (var (_, proposed) in _expiryProposed)
        {
            if (string.Equals(proposed.Subject, expiry.Subject, StringComparison.Ordinal))
            {
                pending++;
            }
        }

        return msgs - Math.Min(msgs, pending) == 1;
    }

    /// <summary>A subject delete marker, or a KV purge (which marks its key gone as well).</summary>
    private static bool IsDeleteMarker(ReadOnlySpan<byte> headers) =>
        !headers.IsEmpty && (NatsHeaders.Get(headers, "Nats-Marker-Reason") is { Length: > 0 } || NatsHeaders.Get(headers, "KV-Operation") == "PURGE");

    // NATS/1.0\r\nNats-Marker-Reason: MaxAge\r\nNats-TTL: <marker TTL>\r\nNats-Rollup: sub\r\n\r\n (nats-server's handleRemovalOrSdm)
    private byte[] MarkerHeaders() => Encoding.UTF8.GetBytes(
        $"NATS/1.0\r\nNats-Marker-Reason: MaxAge\r\n{MessageTtl.Header}: {GoDuration.Format(_config.SubjectDeleteMarkerTtl / 1_000_000_000 * 1_000_000_000)}\r\nNats-Rollup: sub\r\n\r\n");

    /// <summary>A replicated stream's leader: a delete marker goes through the log as a publish does (a Messages entry of one).</summary>
    private void ProposeMarker(string subject)
    {
        var subjectBytes = Encoding.UTF8.GetBytes(subject);
        var headers = MarkerHeaders();
        var entry = new byte[1 + 4 + 8 + 2 + subjectBytes.Length + 2 + 4 + headers.Length + 4];
        var span = entry.AsSpan();
        span[0] = MessagesEntry;
        BinaryPrimitives.WriteInt32LittleEndian(span[1..], 1);
        var p = 5;
        BinaryPrimitives.WriteInt64LittleEndian(span[p..], (DateTime.UtcNow - DateTime.UnixEpoch).Ticks * 100);
        p += 8;
        p += WriteShort(span[p..], subjectBytes);
        p += WriteShort(span[p..], default);
        p += WriteLong(span[p..], headers);
        WriteLong(span[p..], default);
        Propose(entry);
    }

    /// <summary>A replicated stream's leader: messages whose time is up, removed by every replica when committed.</summary>
    private void ProposeExpired(List<ulong> sequences)
    {
        var entry = new byte[1 + 4 + (8 * sequences.Count)];
        entry[0] = ExpiredEntry;
        BinaryPrimitives.WriteInt32LittleEndian(entry.AsSpan(1), sequences.Count);
        for (var i = 0; i < sequences.Count; i++)
        {
            BinaryPrimitives.WriteUInt64LittleEndian(entry.AsSpan(5 + (8 * i)), sequences[i]);
        }

        Propose(entry);
    }

    /// <summary>An Expired entry, on every replica: the messages go (a message already gone is passed over).</summary>
    private void ApplyExpired(ReadOnlySpan<byte> data)
    {
        var count = BinaryPrimitives.ReadInt32LittleEndian(data);
        for (var i = 0; i < count; i++)
        {
            var seq = BinaryPrimitives.ReadUInt64LittleEndian(data[(4 + (8 * i))..]);
            _store.RemoveMessage(seq);
            _expiryProposed.Remove(seq);
        }

        _store.Flush();
    }

    /// <summary>Proposed removals that were applied (their message is gone) are done; ones that got lost are proposed again after a while.</summary>
    private void ForgetAppliedExpiries()
    {
        if (_expiryProposed.Count == 0)
        {
            return;
        }

        var now = DateTime.UtcNow;
        List<ulong>? done = null;
        foreach (var (seq, proposed) in _expiryProposed)
        {
            if (!_store.LoadMessage(seq).Found || now - proposed.Proposed > ExpiryRetry)
            {
                (done ??= []).Add(seq);
            }
        }

        foreach (var seq in done ?? [])
        {
            _expiryProposed.Remove(seq);
        }
    }
}
