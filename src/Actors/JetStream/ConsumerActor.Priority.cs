using System.Text;
using System.Text.Json;
using Courier.Protocols.JetStream;

namespace Courier.Actors.JetStream;

/// <summary>
/// Priority groups of a pull consumer (nats-server 2.11/2.12, ADR-42): which waiting pull request may take the
/// next message under <c>priority_policy</c>, the pin of <c>pinned_client</c> (its id, timer and advisories), and
/// the <c>priority_groups</c> of CONSUMER.INFO.
/// </summary>
/// <remarks>
/// The pin lives in this actor's memory only, as nats-server keeps it in the consumer leader's memory
/// (currentPinId, not replicated, cleared by setLeader(false)): a restart or a new stream leader starts
/// unpinned, and the next pull request without an id gets a new pin. nats-server keeps one pin for the consumer
/// (its first group's, in the info); so does Courier. On the delivery path: a pinned delivery's headers are built
/// in <see cref="_pinHeaders"/>, a buffer kept across deliveries (the outbound batch copies them), not allocated
/// per message.
/// </remarks>
internal sealed partial class ConsumerActor
{
    private const string PinHeaderName = "Nats-Pin-Id";
    private const int PinIdLength = 22; // characters: a NUID, as nats-server's nuid.Next()

    private string? _pinId;
    private string _pinGroup = "";
    private DateTime _pinnedAt;
    private byte[] _pinHeaders = [];

    /// <summary>The pin header alone ("NATS/1.0\r\nNats-Pin-Id: id\r\n\r\n"), for a message without headers; built once per pin.</summary>
    private byte[] _pinOnlyHeaders = [];

    private PriorityPolicy GroupPolicy => _config.PriorityPolicy;

    /// <summary>
    /// The checks of a pull request's priority group, in nats-server's order (processNextMsgRequest): a status to
    /// end it with, or null. Only a JSON request carries a group (nats-server's priorityGroup is nil otherwise);
    /// a request from the pinned client keeps the pin for another priority_timeout.
    /// </summary>
    private string? CheckPriorityGroup(NextRequest request, bool json)
    {
        if (!json)
        {
            return null;
        }

        if ((request.MinPending != 0 || request.MinAckPending != 0) && GroupPolicy != PriorityPolicy.Overflow)
        {
            return "400 Bad Request - Not a Overflow Priority consumer";
        }

        if (!string.IsNullOrEmpty(request.Id) && GroupPolicy != PriorityPolicy.PinnedClient)
        {
            return "400 Bad Request - Not a Pinned Client Priority consumer";
        }

        if (request.Priority is < 0 or > 9)
        {
            return "400 Bad Request - Priority must be between 0 and 9";
        }

        if (GroupPolicy == PriorityPolicy.None)
        {
            return null;
        }

        if (string.IsNullOrEmpty(request.Group))
        {
            return "400 Bad Request - Priority Group missing";
        }

        if (_config.PriorityGroups is not { } groups || !groups.Contains(request.Group, StringComparer.Ordinal))
        {
            return "400 Bad Request - Invalid Priority Group";
        }

        if (_pinId is not null)
        {
            if (string.Equals(request.Id, _pinId, StringComparison.Ordinal))
            {
                ArmPinTimer();
            }
            else if (!string.IsNullOrEmpty(request.Id))
            {
                return "423 Nats-Pin-Id mismatch";
            }
        }

        return null;
    }

    /// <summary>
    /// Queues a pull request: at the end, or with <c>prioritized</c> after every request of the same or a lower
    /// priority number (nats-server's addPrioritized; a request without a group counts as the last priority).
    /// </summary>
    private void Enqueue(Waiting waiting)
    {
        if (GroupPolicy != PriorityPolicy.Prioritized)
        {
            _waiting.AddLast(waiting);
            return;
        }

        for (var node = _waiting.First; node is not null; node = node.Next)
        {
            if (node.Value.Priority > waiting.Priority)
            {
                _waiting.AddBefore(node, waiting);
                return;
            }
        }

        _waiting.AddLast(waiting);
    }

    /// <summary>
    /// Whether the next message may go to <paramref name="waiting"/> under the priority policy (nats-server's
    /// nextWaiting): <c>Pass</c> leaves it waiting for a later message, <c>Refuse</c> ends it with 423
    /// Nats-Wrong-Pin-Id (its pin id is not the pin). With <c>pinned_client</c> and no pin, the first request
    /// without an id that a message comes for is pinned (<paramref name="pinned"/>).
    /// </summary>
    /// <param name="waiting">The request the message would go to.</param>
    /// <param name="pendingAfter">The consumer's num_pending after this message (nats-server compares min_pending with npc+1).</param>
    /// <param name="pinned">Whether this request was just pinned (a max_bytes refusal then takes the pin back).</param>
    private PriorityChoice ChoosePriority(Waiting waiting, long pendingAfter, out bool pinned)
    {
        pinned = false;
        switch (GroupPolicy)
        {
            case PriorityPolicy.PinnedClient when _pinId is null:
                if (waiting.PinId is not null)
                {
                    return PriorityChoice.Refuse; // an old pin's client: it asks again without one
                }

                if (waiting.Group is { } group)
                {
                    Pin(waiting, group);
                }

                pinned = true;
                return PriorityChoice.Take;
            case PriorityPolicy.PinnedClient:
                return string.Equals(waiting.PinId, _pinId, StringComparison.Ordinal) ? PriorityChoice.Take
                    : waiting.PinId is null ? PriorityChoice.Pass // waits while another client holds the pin
                    : PriorityChoice.Refuse;
            case PriorityPolicy.Overflow when waiting.MinPending > 0 || waiting.MinAckPending > 0:
                // Served once either threshold is reached (the message at hand counts as pending).
                return (waiting.MinPending > 0 && waiting.MinPending <= pendingAfter + 1)
                    || (waiting.MinAckPending > 0 && waiting.MinAckPending <= _pending.Count)
                    ? PriorityChoice.Take : PriorityChoice.Pass;
            default:
                return PriorityChoice.Take;
        }
    }

    /// <summary>Pins the consumer to <paramref name="waiting"/>'s client (nats-server's assignNewPinId): a new id, the timer, the advisory.</summary>
    private void Pin(Waiting waiting, string group)
    {
        _pinId = NewPinId();
        _pinGroup = group;
        _pinnedAt = DateTime.UtcNow;
        _pinOnlyHeaders = Encoding.ASCII.GetBytes($"NATS/1.0\r\n{PinHeaderName}: {_pinId}\r\n\r\n");
        waiting.PinId = _pinId;
        ArmPinTimer();
        SendPinAdvisory(pinned: true, group, reason: null);
    }

    /// <summary>Forgets the pin without a word (nats-server's unassignPinId).</summary>
    private void ClearPin()
    {
        _pinId = null;
        _pinnedAt = default;
        Timers.Cancel("pin");
    }

    /// <summary>CONSUMER.UNPIN ("admin") or the pin's timeout: the pin goes, the unpinned advisory says why, and waiting requests may get the next pin.</summary>
    private void Unpin(string group, string reason)
    {
        ClearPin();
        SendPinAdvisory(pinned: false, group, reason);
        Deliver();
    }

    private void OnPinExpired()
    {
        if (_pinId is not null)
        {
            Unpin(_pinGroup, "timeout");
        }
    }

    private void ArmPinTimer()
    {
        if (_config.PinnedTtl > 0)
        {
            Timers.StartSingleTimer("pin", Protocol.PinExpired.Instance, TimeSpan.FromTicks(_config.PinnedTtl / 100)); // ns -> ticks
        }
    }

    /// <summary>
    /// A pinned_client delivery's headers: the message's with <c>Nats-Pin-Id</c> added before the blank line (as
    /// nats-server's genHeader), in a buffer reused from one delivery to the next.
    /// </summary>
    private ReadOnlySpan<byte> WithPinHeader(ReadOnlySpan<byte> headers)
    {
        if (headers.IsEmpty)
        {
            return _pinOnlyHeaders;
        }

        if (!headers.EndsWith("\r\n\r\n"u8))
        {
            return Protocols.Nats.NatsHeaders.Set(headers, PinHeaderName, _pinId!); // not a block we can extend in place; rare
        }

        // <headers without the last CRLF>Nats-Pin-Id: <id>\r\n\r\n
        var keep = headers.Length - 2;
        var length = keep + PinHeaderName.Length + 2 + _pinId!.Length + 4;
        if (_pinHeaders.Length < length)
        {
            _pinHeaders = new byte[Math.Max(length, _pinHeaders.Length * 2)];
        }

        var span = _pinHeaders.AsSpan();
        headers[..keep].CopyTo(span);
        var at = keep;
        at += Encoding.ASCII.GetBytes(PinHeaderName, span[at..]);
        span[at++] = (byte)':';
        span[at++] = (byte)' ';
        at += Encoding.ASCII.GetBytes(_pinId, span[at..]);
        "\r\n\r\n"u8.CopyTo(span[at..]);
        return span[..length];
    }

    // $JS.EVENT.ADVISORY.CONSUMER.PINNED.<stream>.<consumer>: io.nats.jetstream.advisory.v1.consumer_group_pinned
    // $JS.EVENT.ADVISORY.CONSUMER.UNPINNED.<stream>.<consumer>: io.nats.jetstream.advisory.v1.consumer_group_unpinned
    private void SendPinAdvisory(bool pinned, string group, string? reason)
    {
        var advisory = new ConsumerGroupPinAdvisory
        {
            Type = pinned ? "io.nats.jetstream.advisory.v1.consumer_group_pinned" : "io.nats.jetstream.advisory.v1.consumer_group_unpinned",
            Id = Guid.NewGuid().ToString("N"),
            Timestamp = DateTime.UtcNow,
            Stream = _stream,
            Consumer = _name,
            Domain = _context.Domain,
            Group = group,
            PinnedId = pinned ? _pinId : null,
            Reason = reason,
        };
        var subject = pinned ? $"$JS.EVENT.ADVISORY.CONSUMER.PINNED.{_stream}.{_name}" : $"$JS.EVENT.ADVISORY.CONSUMER.UNPINNED.{_stream}.{_name}";
        _advisories.Publish(subject, null, default, JsonSerializer.SerializeToUtf8Bytes(advisory, ConsumerJsonContext.Default.ConsumerGroupPinAdvisory));
    }

    /// <summary>CONSUMER.INFO's <c>priority_groups</c>: the first group and its pin, as nats-server's info (one pin per consumer).</summary>
    private void FillPriorityGroups(ConsumerInfoResponse info)
    {
        if (_config.PriorityGroups is { Count: > 0 } groups)
        {
            var state = new PriorityGroupState { Group = groups[0], PinnedClientId = _pinId };
            if (_pinId is not null)
            {
                state.PinnedTs = _pinnedAt;
            }

            info.PriorityGroups = [state];
        }
    }

    /// <summary>A NUID-shaped id: 22 characters of 0-9 A-Z a-z.</summary>
    private static string NewPinId()
    {
        const string Alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        Span<char> id = stackalloc char[PinIdLength];
        for (var i = 0; i < id.Length; i++)
        {
            id[i] = Alphabet[Random.Shared.Next(Alphabet.Length)];
        }

        return new string(id);
    }

    private enum PriorityChoice
    {
        Take,
        Pass,
        Refuse,
    }
}
