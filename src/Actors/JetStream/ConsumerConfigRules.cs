using System.Text.Json;
using Courier.Protocols.JetStream;
using Courier.Protocols.Subjects;

namespace Courier.Actors.JetStream;

/// <summary>
/// What nats-server checks when a consumer is created (consumer.go setConsumerConfigDefaults,
/// checkConsumerCfg, and the work-queue rules of addConsumerWithAssignment), with its error codes.
/// </summary>
internal static class ConsumerConfigRules
{
    /// <summary>Pull requests a pull consumer queues at most unless max_waiting says otherwise (nats-server JSWaitQueueDefaultMax).</summary>
    public const int DefaultMaxWaiting = 512;

    private const int MaxDescriptionLength = 4 * 1024; // bytes: nats-server JSMaxDescriptionLen

    private const long MinHeartbeat = 100_000_000; // ns: idle_heartbeat of a push consumer is at least 100 ms
    private const long MinRequestExpires = 1_000_000; // ns: max_expires is at least 1 ms

    /// <summary>nats-server's JsDefaultMaxAckPending: acknowledgements a consumer may wait for unless it says otherwise.</summary>
    public const long DefaultMaxAckPending = 1000;

    /// <summary>ack_wait when a consumer sets none (nats-server's JsAckWaitDefault).</summary>
    public const long DefaultAckWait = 30_000_000_000; // ns: 30 s

    /// <summary>
    /// Fills in nats-server's defaults: max_waiting for pull consumers, max_deliver -1 for 0,
    /// max_ack_pending 1000 for consumers that take acks, and ack_wait 30 s.
    /// </summary>
    /// <remarks>
    /// Before the configuration is stored, compared (a create with action "create" is compared with the running
    /// consumer's configuration after its defaults, as nats-server compares them) or given to the consumer
    /// actor (which never changes it).
    /// </remarks>
    public static void ApplyDefaults(ConsumerConfig config)
    {
        // Every ack policy, not only explicit/all as nats-server: a consumer's info has always said 30 s here.
        if (config.AckWait <= 0)
        {
            config.AckWait = DefaultAckWait;
        }

        if (config.MaxAckPending == 0 && config.AckPolicy is AckPolicy.Explicit or AckPolicy.All)
        {
            config.MaxAckPending = DefaultMaxAckPending;
        }

        if (config.DeliverSubject is null && config.MaxWaiting == 0)
        {
            config.MaxWaiting = DefaultMaxWaiting;
        }

        if (config.MaxDeliver == 0)
        {
            config.MaxDeliver = -1;
        }

        // nats-server (setConsumerConfigDefaults): a negative priority_timeout is none, and a pinned_client
        // consumer without one keeps a pin 2 minutes (JsDefaultPinnedTTL).
        if (config.PinnedTtl < 0)
        {
            config.PinnedTtl = 0;
        }

        if (config.PriorityPolicy == PriorityPolicy.PinnedClient && config.PinnedTtl == 0)
        {
            config.PinnedTtl = DefaultPinnedTtl;
        }
    }

    /// <summary>How long a pin lasts without a pull request from its client unless priority_timeout says otherwise (nats-server's JsDefaultPinnedTTL).</summary>
    public const long DefaultPinnedTtl = 120_000_000_000; // ns: 2 minutes

    /// <summary>
    /// nats-server's checkConsumerCfg for priority groups (2.12): a policy needs a pull consumer and at least one
    /// group, each named as <c>^[a-zA-Z0-9/_=-]{1,16}$</c>; without a policy, neither groups nor priority_timeout.
    /// </summary>
    public static ApiError? CheckPriority(ConsumerConfig config)
    {
        if (config.PriorityPolicy != PriorityPolicy.None)
        {
            if (config.DeliverSubject is not null)
            {
                return ApiError.ConsumerPushWithPriorityGroup;
            }

            if (config.PriorityGroups is not { Count: > 0 } groups)
            {
                return ApiError.ConsumerPriorityPolicyWithoutGroup;
            }

            foreach (var group in groups)
            {
                if (string.IsNullOrEmpty(group))
                {
                    return ApiError.ConsumerEmptyGroupName;
                }

                if (!IsValidGroupName(group))
                {
                    return ApiError.ConsumerInvalidGroupName;
                }
            }

            return null;
        }

        if (config.PriorityGroups is { Count: > 0 })
        {
            return ApiError.ConsumerPriorityGroupWithPolicyNone;
        }

        return config.PinnedTtl > 0 ? ApiError.ConsumerPinnedTtlWithoutPriorityPolicyNone : null;
    }

    /// <summary>
    /// A CONSUMER.UNPIN body checked as nats-server's jsConsumerUnpinRequest checks it before it looks for the
    /// stream: JSON (an empty body is Go's "unexpected end of JSON input"), a group, a valid group name.
    /// </summary>
    public static ApiError? ReadUnpin(byte[] payload, out string group)
    {
        group = "";
        ConsumerUnpinRequest? request;
        try
        {
            request = payload.AsSpan().Trim(" \t\r\n"u8).IsEmpty ? throw new WireValueException("unexpected end of JSON input")
                : JsonSerializer.Deserialize(payload, ConsumerJsonContext.Default.ConsumerUnpinRequest);
        }
        catch (WireValueException e)
        {
            return ApiError.InvalidJsonBecause(e.Message);
        }
        catch (JsonException)
        {
            return ApiError.InvalidJson;
        }

        group = request?.Group ?? "";
        if (group.Length == 0)
        {
            return ApiError.InvalidJsonBecause("consumer group not specified");
        }

        return IsValidGroupName(group) ? null : ApiError.ConsumerInvalidGroupName;
    }

    /// <summary>A priority group name as nats-server's validGroupName: 1 to 16 of A-Z a-z 0-9 / _ = -.</summary>
    public static bool IsValidGroupName(string group)
    {
        if (group.Length is 0 or > 16)
        {
            return false;
        }

        foreach (var c in group)
        {
            if (!char.IsAsciiLetterOrDigit(c) && c is not ('/' or '_' or '=' or '-'))
            {
                return false;
            }
        }

        return true;
    }

    /// <summary>The configuration's own rules (push or pull, heartbeats, flow control, request limits).</summary>
    public static ApiError? Check(ConsumerConfig config, StreamConfig stream)
    {
        // A durable consumer of a replicated stream is replicated through the stream's log (its definition,
        // and its state every second); of an R1 stream it is not: nats-server's answer on a single server.
        if (config.Replicas > 1 && stream.Replicas <= 1)
        {
            return ApiError.StreamReplicasNotSupported;
        }

        if (config.Replicas > stream.Replicas && stream.Replicas > 1)
        {
            return new ApiError(400, 10126, "consumer config replica count exceeds parent stream");
        }

        // Every backoff step is a delivery attempt, so max_deliver (-1 when not set) must exceed their count.
        if (config.Backoff is { Count: > 0 } backoff && config.MaxDeliver <= backoff.Count)
        {
            return new ApiError(400, 10116, "max deliver is required to be > length of backoff values");
        }

        if (config.Description is { } description && System.Text.Encoding.UTF8.GetByteCount(description) > MaxDescriptionLength)
        {
            return new ApiError(400, 10107, $"consumer description is too long, maximum allowed is {MaxDescriptionLength}");
        }

        // filter_subjects (2.10): no two filters may match a common subject, so counts add up.
        var filters = Filters(config);
        for (var i = 0; i < filters.Count; i++)
        {
            for (var j = i + 1; j < filters.Count; j++)
            {
                if (SubjectRules.Collide(filters[i], filters[j]))
                {
                    return new ApiError(400, 10138, "consumer subject filters cannot overlap");
                }
            }
        }

        if (config.DeliverSubject is { } deliver)
        {
            if (SubjectRules.HasWildcard(System.Text.Encoding.UTF8.GetBytes(deliver)))
            {
                return ApiError.ConsumerDeliverToWildcards;
            }

            if (!SubjectRules.IsValidSubject(deliver))
            {
                return ApiError.ConsumerInvalidDeliverSubject;
            }

            if (StreamSubjects(stream).Any(s => SubjectRules.Matches(deliver, s)))
            {
                return ApiError.ConsumerDeliverCycle; // the stream would store its own deliveries
            }

            if (config.MaxWaiting != 0)
            {
                return ApiError.ConsumerPushMaxWaiting;
            }

            if (config.MaxAckPending > 0 && config.AckPolicy == AckPolicy.None)
            {
                return ApiError.ConsumerMaxPendingAckPolicyRequired;
            }

            if (config.IdleHeartbeat > 0 && config.IdleHeartbeat < MinHeartbeat)
            {
                return ApiError.ConsumerSmallHeartbeat;
            }
        }
        else
        {
            if (config.AckPolicy == AckPolicy.None && stream.Retention == RetentionPolicy.WorkQueue)
            {
                return ApiError.ConsumerPullRequiresAck;
            }

            if (config.RateLimit > 0)
            {
                return ApiError.ConsumerPullWithRateLimit;
            }

            if (config.MaxWaiting < 0)
            {
                return ApiError.ConsumerMaxWaitingNegative;
            }

            if (config.IdleHeartbeat > 0)
            {
                return ApiError.ConsumerHeartbeatRequiresPush;
            }

            if (config.FlowControl)
            {
                return ApiError.ConsumerFlowControlRequiresPush;
            }

            if (config.MaxRequestBatch < 0)
            {
                return ApiError.ConsumerMaxRequestBatchNegative;
            }

            if (config.MaxRequestExpires != 0 && config.MaxRequestExpires < MinRequestExpires)
            {
                return ApiError.ConsumerMaxRequestExpiresTooSmall;
            }
        }

        if (config.SampleFrequency is { Length: > 0 } && SamplePercent(config.SampleFrequency) is { Error: { } sampling })
        {
            return new ApiError(400, 10095, $"failed to parse consumer sampling configuration: {sampling}");
        }

        if (config.FlowControl && config.IdleHeartbeat == 0)
        {
            return ApiError.ConsumerFlowControlNeedsHeartbeats;
        }

        return CheckPriority(config);
    }

    /// <summary>
    /// sample_freq as nats-server reads it (strconv.Atoi of the value without a trailing "%"): the percentage, or
    /// the error its answer names, Go's words (a negative number is refused with a nil error, printed "&lt;nil&gt;").
    /// </summary>
    public static (int Percent, string? Error) SamplePercent(string? frequency)
    {
        if (string.IsNullOrEmpty(frequency))
        {
            return (0, null);
        }

        var digits = frequency.EndsWith('%') ? frequency[..^1] : frequency;
        var body = digits.StartsWith('+') || digits.StartsWith('-') ? digits[1..] : digits;
        if (body.Length == 0 || !body.All(char.IsAsciiDigit))
        {
            return (0, $"strconv.Atoi: parsing {GoQuote(digits)}: invalid syntax");
        }

        if (!long.TryParse(digits, System.Globalization.NumberStyles.AllowLeadingSign, System.Globalization.CultureInfo.InvariantCulture, out var value))
        {
            return (0, $"strconv.Atoi: parsing {GoQuote(digits)}: value out of range");
        }

        return value < 0 ? (0, "<nil>") : ((int)Math.Min(value, 100), null);
    }

    private static string GoQuote(string value) => System.Text.Json.JsonSerializer.Serialize(value);

    /// <summary>A <c>pause_until</c> as kept: in UTC, and none for Go's zero time (nats-server stores it so, and the zero time resumes).</summary>
    public static DateTime? PauseTime(DateTime? until) =>
        until is not { } time || time == DateTime.MinValue ? null : time.Kind == DateTimeKind.Unspecified ? DateTime.SpecifyKind(time, DateTimeKind.Utc) : time.ToUniversalTime();

    /// <summary>A copy to change (a running consumer's configuration is replaced whole, never changed in place).</summary>
    public static ConsumerConfig Copy(ConsumerConfig config) =>
        JsonSerializer.Deserialize(JsonSerializer.SerializeToUtf8Bytes(config, ConsumerJsonContext.Default.ConsumerConfig), ConsumerJsonContext.Default.ConsumerConfig)!;

    /// <summary>
    /// Whether a create's configuration (its defaults applied) is the one <paramref name="current"/> runs
    /// with, field by field as nats-server's reflect.DeepEqual of the two; metadata in any order.
    /// </summary>
    public static bool SameConfig(ConsumerConfig requested, ConsumerConfig current) =>
        JsonElement.DeepEquals(
            JsonSerializer.SerializeToElement(requested, ConsumerJsonContext.Default.ConsumerConfig),
            JsonSerializer.SerializeToElement(current, ConsumerJsonContext.Default.ConsumerConfig));

    /// <summary>
    /// Whether a consumer running with <paramref name="current"/> may take <paramref name="requested"/> (both
    /// with their defaults), as nats-server 2.9.10's checkNewConsumerConfig: its start, ack, replay,
    /// heartbeat, flow control and max_waiting stay; a push consumer stays push and a pull consumer pull;
    /// a push consumer's deliver subject moves only while no one subscribes to it. Everything else may change,
    /// the priority fields too (priority_groups, priority_policy, priority_timeout: 2.11/2.12 name none of them).
    /// </summary>
    /// <param name="current">The running configuration.</param>
    /// <param name="requested">The create's configuration, its defaults applied and its config.name set as the running one's.</param>
    /// <param name="hasInterest">Whether anyone subscribes to a subject.</param>
    /// <param name="interestRetention">
    /// The stream keeps messages while a consumer needs them: Courier then refuses a change of filters, which
    /// its interest ledger takes only when a consumer starts (nats-server 2.9.10 takes it).
    /// </param>
    public static ApiError? CheckUpdate(ConsumerConfig current, ConsumerConfig requested, Func<string, bool> hasInterest, bool interestRetention)
    {
        var reason =
            current.DeliverPolicy != requested.DeliverPolicy ? "deliver policy can not be updated"
            : current.OptStartSeq != requested.OptStartSeq ? "start sequence can not be updated"
            : current.OptStartTime != requested.OptStartTime ? "start time can not be updated"
            : current.AckPolicy != requested.AckPolicy ? "ack policy can not be updated"
            : current.ReplayPolicy != requested.ReplayPolicy ? "replay policy can not be updated"
            : current.IdleHeartbeat != requested.IdleHeartbeat ? "heart beats can not be updated"
            : current.FlowControl != requested.FlowControl ? "flow control can not be updated"
            : current.MaxWaiting != requested.MaxWaiting ? "max waiting can not be updated"
            : null;
        if (reason is not null)
        {
            return ApiError.ConsumerCreateFailed(reason);
        }

        if (!string.Equals(current.DeliverSubject, requested.DeliverSubject, StringComparison.Ordinal))
        {
            if (current.DeliverSubject is null)
            {
                return ApiError.ConsumerCreateFailed("can not update pull consumer to push based");
            }

            if (requested.DeliverSubject is null)
            {
                return ApiError.ConsumerCreateFailed("can not update push consumer to pull based");
            }

            if (hasInterest(current.DeliverSubject))
            {
                return ApiError.ConsumerNameExists; // nats-server: someone still subscribes to the old one
            }
        }

        if (interestRetention && !Filters(current).SequenceEqual(Filters(requested), StringComparer.Ordinal))
        {
            return ApiError.ConsumerCreateFailed("filter subject can not be updated");
        }

        return null;
    }

    /// <summary>
    /// A work-queue stream's rules for a new consumer: explicit acks; beside other consumers only a
    /// filter that collides with none of theirs; deliver all.
    /// </summary>
    public static ApiError? CheckWorkQueue(ConsumerConfig config, IEnumerable<ConsumerConfig> others)
    {
        if (config.AckPolicy != AckPolicy.Explicit)
        {
            return ApiError.ConsumerWorkQueueRequiresExplicitAck;
        }

        var filters = Filters(config);
        var existing = others.ToList();
        if (existing.Count > 0)
        {
            if (filters.Count == 0)
            {
                return ApiError.ConsumerWorkQueueMultipleUnfiltered;
            }

            foreach (var other in existing)
            {
                var theirs = Filters(other);
                if (theirs.Count == 0 || filters.Any(f => theirs.Any(t => SubjectRules.Collide(f, t))))
                {
                    return ApiError.ConsumerWorkQueueNotUnique;
                }
            }
        }

        return config.DeliverPolicy == DeliverPolicy.All ? null : ApiError.ConsumerWorkQueueNotDeliverAll;
    }

    /// <summary>The consumer's filter subjects (filter_subject or filter_subjects); empty when unfiltered.</summary>
    public static IReadOnlyList<string> Filters(ConsumerConfig config) =>
        config.FilterSubjects is { Count: > 0 } many ? many
        : config.FilterSubject is { Length: > 0 } one ? [one]
        : [];

    private static IEnumerable<string> StreamSubjects(StreamConfig stream) => stream.Subjects is { Count: > 0 } s ? s : [stream.Name];
}
