using System.Globalization;
using System.Text;
using System.Text.Json;
using Courier.Protocols;
using Courier.Protocols.JetStream;

namespace Courier.Actors.JetStream;

/// <summary>Pull requests (CONSUMER.MSG.NEXT): their limits, the waiting queue and the statuses that end them.</summary>
internal sealed partial class ConsumerActor
{
    /// <summary>How often waiting pull requests are checked for a reply subject nobody listens to any more.</summary>


    /// <summary>Counts delivery passes, so each waiting request's reply subject is looked up once per pass.</summary>
    private long _deliveryPass;

    private int MaxWaiting => _config.MaxWaiting > 0 ? _config.MaxWaiting : ConsumerConfigRules.DefaultMaxWaiting;

    // CONSUMER.MSG.NEXT: a pull request for a batch, delivered to its reply subject. The payload is
    // empty (one message), a bare number (the batch) or {batch, expires, no_wait, max_bytes, idle_heartbeat}.
    // Checks in nats-server's order (consumer.go processNextMsgRequest); each refusal is a status to the reply subject.
    private void Next(Protocol.Next next)
    {
        if (IsPush)
        {
            Status(next.Reply, "409 Consumer is push based");
            return;
        }

        var request = new NextRequest();
        var text = next.Payload.AsSpan().Trim(" \t\r\n"u8);
        var json = text.Length > 0 && text[0] == (byte)'{';
        if (json)
        {
            try
            {
                request = JsonSerializer.Deserialize(text, ConsumerJsonContext.Default.NextRequest) ?? request;
            }
            catch (JsonException e)
            {
                Status(next.Reply, "400 Bad Request - " + e.Message.ReplaceLineEndings(" "));
                return;
            }

            if (request.IdleHeartbeat > 0 && request.IdleHeartbeat * 2 > request.Expires)
            {
                Status(next.Reply, "400 Bad Request - heartbeat value too large");
                return;
            }
        }
        else if (text.Length > 0 && int.TryParse(Encoding.ASCII.GetString(text), NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var batch))
        {
            request.Batch = batch;
        }

        if (_config.MaxRequestBatch > 0 && request.Batch > _config.MaxRequestBatch)
        {
            Status(next.Reply, $"409 Exceeded MaxRequestBatch of {_config.MaxRequestBatch}");
            return;
        }

        if (request.Expires > 0 && _config.MaxRequestExpires > 0 && request.Expires > _config.MaxRequestExpires)
        {
            Status(next.Reply, $"409 Exceeded MaxRequestExpires of {GoDuration.Format(_config.MaxRequestExpires)}");
            return;
        }

        if (request.MaxBytes > 0 && _config.MaxRequestMaxBytes > 0 && request.MaxBytes > _config.MaxRequestMaxBytes)
        {
            Status(next.Reply, $"409 Exceeded MaxRequestMaxBytes of {_config.MaxRequestMaxBytes}");
            return;
        }

        if (CheckPriorityGroup(request, json) is { } refused)
        {
            Status(next.Reply, refused);
            return;
        }

        var now = DateTime.UtcNow;
        _lastActivity = now;
        if (_waiting.Count >= MaxWaiting)
        {
            // Full: make room by dropping requests that expired or lost their subscriber.
            DropStaleWaiting(now, checkInterest: true);
        }

        if (request.NoWait)
        {
            var available = NumPending() + (ulong)_redeliver.Count;
            if (available == 0 && request.Expires <= 0)
            {
                Status(next.Reply, "404 No Messages");
                return;
            }

            if (available > 0 && available < (ulong)_waiting.Sum(w => (long)w.Remaining))
            {
                Status(next.Reply, "408 Requests Pending");
                return;
            }

            // Otherwise a one-shot: it ends as soon as the messages at hand are delivered.
        }

        if (_waiting.Count >= MaxWaiting)
        {
            Status(next.Reply, "409 Exceeded MaxWaiting");
            return;
        }

        var waiting = new Waiting(next.Reply, Math.Max(request.Batch, 1), request.NoWait,
            request.Expires > 0 ? now.AddTicks(request.Expires / 100) : DateTime.MaxValue,
            request.IdleHeartbeat > 0 ? TimeSpan.FromTicks(request.IdleHeartbeat / 100) : TimeSpan.Zero)
        {
            LastActivity = now,
            MaxBytes = Math.Max(request.MaxBytes, 0),
            Group = json && !string.IsNullOrEmpty(request.Group) ? request.Group : null,
            PinId = json && !string.IsNullOrEmpty(request.Id) ? request.Id : null,
            MinPending = json ? request.MinPending : 0,
            MinAckPending = json ? request.MinAckPending : 0,
            Priority = json ? request.Priority : int.MaxValue, // no group: the last priority, as nats-server's nil priorityGroup
        };
        Enqueue(waiting);
        TickRegularly();
        Deliver();
    }

    /// <summary>
    /// The pull request the next message (of <paramref name="size"/> bytes) goes to, counted against
    /// it (nats-server's nextWaiting): an expired request ends with 408 Request Timeout; the priority policy
    /// may pass a request over (it waits for a later message) or end it with 423 Nats-Wrong-Pin-Id; a request
    /// whose max_bytes cannot take the message ends with 409 Message Size Exceeds MaxBytes. Null when none is left.
    /// </summary>
    /// <param name="size">The message's size as max_bytes counts it.</param>
    /// <param name="pendingAfter">The consumer's num_pending after this message, for <c>overflow</c>'s min_pending.</param>
    private Waiting? TakeWaiting(int size, long pendingAfter)
    {
        var now = DateTime.UtcNow;
        for (var node = _waiting.First; node is not null;)
        {
            var next = node.Next;
            var waiting = node.Value;
            if (waiting.Expires <= now)
            {
                _waiting.Remove(node);
                PendingStatus(waiting, "408 Request Timeout");
                node = next;
                continue;
            }

            var pinned = false;
            if (GroupPolicy != PriorityPolicy.None)
            {
                var choice = ChoosePriority(waiting, pendingAfter, out pinned);
                if (choice == PriorityChoice.Pass)
                {
                    node = next;
                    continue;
                }

                if (choice == PriorityChoice.Refuse)
                {
                    _waiting.Remove(node);
                    PendingStatus(waiting, "423 Nats-Wrong-Pin-Id");
                    node = next;
                    continue;
                }
            }

            if (waiting.MaxBytes > 0)
            {
                if (size > waiting.MaxBytes)
                {
                    _waiting.Remove(node);
                    PendingStatus(waiting, "409 Message Size Exceeds MaxBytes");
                    if (pinned)
                    {
                        ClearPin(); // the pin just given to this request goes with it (nats-server)
                    }

                    node = next;
                    continue;
                }

                waiting.MaxBytes -= size;
                if (waiting.MaxBytes == 0)
                {
                    waiting.Remaining = 1; // exactly full: this message is the request's last
                }
            }

            // A request whose reply subject nobody subscribes to any more is dropped without a word
            // before it takes a message (nats-server's nextWaiting): the message stays for others
            // instead of going into ack pending towards nobody. Once per request and pass: a lookup
            // in the subject space, not a cost per message of a large batch.
            if (waiting.InterestCheckedPass != _deliveryPass)
            {
                waiting.InterestCheckedPass = _deliveryPass;
                if (!_context.HasInterest(waiting.Reply))
                {
                    _waiting.Remove(node);
                    node = next;
                    continue;
                }
            }

            waiting.Remaining--;
            waiting.Delivered++;
            waiting.LastActivity = now;
            if (waiting.Remaining <= 0)
            {
                _waiting.Remove(node);
            }

            return waiting;
        }

        return null;
    }

    /// <summary>
    /// After a delivery pass that ran out of messages: no_wait requests that got something end with
    /// 408 Request Timeout (they are one-shots); those that got nothing wait for their expiry.
    /// </summary>
    private void EndNoWaitRequests()
    {
        for (var node = _waiting.First; node is not null;)
        {
            var next = node.Next;
            if (node.Value is { NoWait: true, Delivered: > 0 } done)
            {
                _waiting.Remove(node);
                PendingStatus(done, "408 Request Timeout");
            }

            node = next;
        }
    }

    /// <summary>
    /// Per tick: expired requests end with 408, the others get their heartbeats. Interest is not
    /// swept here: as nats-server, a request whose inbox went away is dropped when a message is there
    /// for it (<see cref="TakeWaiting"/>) or when the waiting list is full, so a client that reconnects
    /// and subscribes its inbox again within the expiry still gets its messages.
    /// </summary>
    private void ProcessWaiting(DateTime now)
    {
        DropStaleWaiting(now, checkInterest: false);
        foreach (var waiting in _waiting)
        {
            if (waiting.Heartbeat > TimeSpan.Zero && now - waiting.LastActivity >= waiting.Heartbeat)
            {
                waiting.LastActivity = now;
                SendIdleHeartbeat(waiting.Reply);
            }
        }
    }

    // Expired requests get 408 Request Timeout; with checkInterest, requests whose reply subject
    // nobody subscribes to any more go without a word (nats-server's processWaiting).
    private void DropStaleWaiting(DateTime now, bool checkInterest)
    {
        for (var node = _waiting.First; node is not null;)
        {
            var next = node.Next;
            var waiting = node.Value;
            if (waiting.Expires <= now)
            {
                _waiting.Remove(node);
                PendingStatus(waiting, "408 Request Timeout");
            }
            else if (checkInterest && !_context.HasInterest(waiting.Reply))
            {
                _waiting.Remove(node);
            }

            node = next;
        }
    }

    // NATS/1.0 <status>\r\nNats-Pending-Messages: <batch left>\r\nNats-Pending-Bytes: <max_bytes left>\r\n\r\n
    private void PendingStatus(Waiting waiting, string status) =>
        _out.Publish(waiting.Reply, null, Encoding.ASCII.GetBytes(string.Create(CultureInfo.InvariantCulture,
            $"NATS/1.0 {status}\r\nNats-Pending-Messages: {waiting.Remaining}\r\nNats-Pending-Bytes: {waiting.MaxBytes}\r\n\r\n")), default);

    /// <summary>One pull request waiting for messages.</summary>
    private sealed class Waiting(string reply, int remaining, bool noWait, DateTime expires, TimeSpan heartbeat)
    {
        public string Reply { get; } = reply;

        /// <summary>Messages the request still takes.</summary>
        public int Remaining { get; set; } = remaining;

        public int Delivered { get; set; }

        public bool NoWait { get; } = noWait;

        public DateTime Expires { get; } = expires;

        public TimeSpan Heartbeat { get; } = heartbeat;

        public DateTime LastActivity { get; set; }

        /// <summary>Bytes the request still takes (its max_bytes less what it got); 0 means no limit.</summary>
        public long MaxBytes { get; set; }

        /// <summary>The delivery pass that last found someone subscribed to <see cref="Reply"/>.</summary>
        public long InterestCheckedPass { get; set; } = -1;

        /// <summary>The priority group the request named (a JSON request to a consumer with a priority policy); null: none.</summary>
        public string? Group { get; init; }

        /// <summary>The pin id the request came with, or the one it was given (pinned_client); null: none.</summary>
        public string? PinId { get; set; }

        /// <summary>overflow: served only while num_pending is at least this (0: no condition).</summary>
        public long MinPending { get; init; }

        /// <summary>overflow: served only while num_ack_pending is at least this (0: no condition).</summary>
        public long MinAckPending { get; init; }

        /// <summary>prioritized: 0 is served first; a request without a group comes last.</summary>
        public int Priority { get; init; }
    }
}
