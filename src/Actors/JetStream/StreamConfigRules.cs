using Courier.Protocols.JetStream;
using Courier.Protocols.Subjects;

namespace Courier.Actors.JetStream;

/// <summary>
/// A stream configuration's defaults and checks as nats-server 2.9 applies them on STREAM.CREATE
/// and UPDATE (jsStreamCreateRequest, checkStreamCfg): the same refusals with the same texts, and
/// the same filled-in defaults, so a create repeated with the same request finds the same
/// configuration (and a different one is refused with 10058).
/// </summary>
internal static class StreamConfigRules
{
    private const int MaxNameLength = 255;          // characters, nats-server's JSMaxNameLen
    private const int MaxDescriptionLength = 4096;  // bytes, nats-server's JSMaxDescriptionLen
    private const long MinWindow = 100_000_000;     // ns: 100 ms, the smallest max_age / duplicate_window
    private const long DefaultDuplicateWindow = 120_000_000_000; // ns: 2 minutes, StreamDefaultDuplicatesWindow

    /// <summary>The checks nats-server makes before it looks at the configuration itself: only on create.</summary>
    public static ApiError? CheckCreate(StreamConfig config)
    {
        if (config.Sealed)
        {
            return ApiError.StreamInvalidConfig("stream configuration for create can not be sealed");
        }

        if (config.MirrorDirect && config.Mirror is null)
        {
            return ApiError.StreamInvalidConfig("stream has no mirror but does have mirror direct");
        }

        return null;
    }

    /// <summary>
    /// Settings nats-server 2.10 has and Courier does not apply, refused on create and update rather
    /// than stored and echoed: num_replicas above 1 (nats-server's answer on a single server; Courier
    /// replicates no stream), compression other than none, and consumer_limits.
    /// </summary>
    /// <summary>nats-server's StreamMaxReplicas.</summary>
    public const int MaxReplicas = 5;

    public static ApiError? CheckImplemented(StreamConfig config)
    {
        if (config.Replicas > MaxReplicas)
        {
            return ApiError.StreamInvalidConfig($"maximum replicas is {MaxReplicas}"); // nats-server checks this before the cluster
        }

        if (config.Compression is not ("none" or ""))
        {
            return ApiError.StreamInvalidConfig($"stream compression \"{config.Compression}\" is not supported");
        }

        if (config.ConsumerLimits.Values.Any(limit => limit != 0))
        {
            return ApiError.StreamInvalidConfig("stream consumer limits are not supported");
        }

        return null;
    }

    /// <summary>
    /// Fills nats-server's defaults into <paramref name="config"/> and checks it (checkStreamCfg); null
    /// when it is valid. <paramref name="streams"/> finds the account's other streams' configurations
    /// (for the mirror and sources checks; null when there is none of that name).
    /// </summary>
    public static ApiError? ApplyDefaultsAndCheck(StreamConfig config, Func<string, StreamConfig?>? streams = null)
    {
        if (config.Name.Length == 0 || config.Name.IndexOfAny([' ', '\t', '\r', '\n', '.', '*', '>']) >= 0)
        {
            return ApiError.StreamInvalidConfig("stream name is required and can not contain '.', '*', '>'");
        }

        if (config.Name.Length > MaxNameLength)
        {
            return ApiError.StreamInvalidConfig($"stream name is too long, maximum allowed is {MaxNameLength}");
        }

        if (config.Description is { } description && System.Text.Encoding.UTF8.GetByteCount(description) > MaxDescriptionLength)
        {
            return ApiError.StreamInvalidConfig($"stream description is too long, maximum allowed is {MaxDescriptionLength}");
        }

        if (config.Storage == StorageType.Unknown)
        {
            return ApiError.StreamInvalidConfig("invalid storage type");
        }

        if (config.Retention == RetentionPolicy.Unknown || config.Discard == DiscardPolicy.Unknown)
        {
            return ApiError.StreamInvalidConfig("invalid retention or discard policy");
        }

        config.Replicas = config.Replicas == 0 ? 1 : config.Replicas;
        config.MaxMsgs = config.MaxMsgs == 0 ? -1 : config.MaxMsgs;
        config.MaxMsgsPerSubject = config.MaxMsgsPerSubject == 0 ? -1 : config.MaxMsgsPerSubject;
        config.MaxBytes = config.MaxBytes == 0 ? -1 : config.MaxBytes;
        config.MaxMsgSize = config.MaxMsgSize == 0 ? -1 : config.MaxMsgSize;
        config.MaxConsumers = config.MaxConsumers == 0 ? -1 : config.MaxConsumers;
        if (config.DuplicateWindow == 0 && config.Mirror is null)
        {
            config.DuplicateWindow = config.MaxAge != 0 && config.MaxAge < DefaultDuplicateWindow ? config.MaxAge : DefaultDuplicateWindow;
        }

        if (config.MaxAge > 0 && config.MaxAge < MinWindow)
        {
            return ApiError.StreamInvalidConfig("max age needs to be >= 100ms");
        }

        if (config.DuplicateWindow < 0)
        {
            return ApiError.StreamInvalidConfig("duplicates window can not be negative");
        }

        if (config.MaxAge != 0 && config.DuplicateWindow > config.MaxAge)
        {
            return ApiError.StreamInvalidConfig("duplicates window can not be larger then max age");
        }

        if (config.DuplicateWindow > 0 && config.DuplicateWindow < MinWindow)
        {
            return ApiError.StreamInvalidConfig("duplicates window needs to be >= 100ms");
        }

        if (config.DenyPurge && config.AllowRollup)
        {
            return ApiError.StreamInvalidConfig("roll-ups require the purge permission");
        }

        // Counters (nats-server 2.12): a subject's last message is its total, so nothing may refuse an
        // increment for space (discard new), remove it by a TTL, or take it away by an ack (other retentions).
        if (config.AllowMsgCounter)
        {
            if (config.Discard == DiscardPolicy.New)
            {
                return ApiError.StreamInvalidConfig("counter stream cannot use discard new");
            }

            if (config.AllowMsgTtl)
            {
                return ApiError.StreamInvalidConfig("counter stream cannot use message TTLs");
            }

            if (config.Retention != RetentionPolicy.Limits)
            {
                return ApiError.StreamInvalidConfig("counter stream can only use limits retention");
            }
        }

        if (config.DiscardNewPerSubject)
        {
            if (config.Discard != DiscardPolicy.New)
            {
                return ApiError.StreamInvalidConfig("discard new per subject requires discard new policy to be set");
            }

            if (config.MaxMsgsPerSubject <= 0)
            {
                return ApiError.StreamInvalidConfig("discard new per subject requires max msgs per subject > 0");
            }
        }

        // subject_delete_marker_ttl (nats-server 2.11, not pedantic): at least a second; it brings message TTLs and
        // roll-ups with it (a marker rolls its subject up, and expires by its own TTL).
        if (config.SubjectDeleteMarkerTtl > 0)
        {
            if (config.SubjectDeleteMarkerTtl < 1_000_000_000)
            {
                return ApiError.StreamInvalidConfig("subject delete marker TTL must be at least 1 second");
            }

            if (config.Mirror is not null)
            {
                return ApiError.StreamInvalidConfig("subject delete markers forbidden on mirrors");
            }

            config.AllowMsgTtl = true;
            if (!config.AllowRollup)
            {
                config.AllowRollup = true;
                config.DenyPurge = false;
            }
        }
        else if (config.SubjectDeleteMarkerTtl < 0)
        {
            return ApiError.StreamInvalidConfig("subject delete marker TTL must not be negative");
        }

        if (CheckOrigins(config, streams ?? (_ => null)) is { } badOrigin)
        {
            return badOrigin;
        }

        if (config.Subjects is not { Count: > 0 })
        {
            if (config.Mirror is null && config.Sources is not { Count: > 0 })
            {
                config.Subjects = [config.Name];
            }
        }
        else if (CheckSubjects(config) is { } invalid)
        {
            return invalid;
        }

        if (config.SubjectTransform is { } transform &&
            SubjectTransform.TryCreate(string.IsNullOrEmpty(transform.Source) ? ">" : transform.Source, transform.Destination) is null)
        {
            // nats-server 2.10 refuses it when it starts the stream (a stream create error).
            return new ApiError(500, 10049, $"stream subject transform from '{transform.Source}' to '{transform.Destination}': invalid mapping destination");
        }

        return CheckRePublish(config);
    }

    private static ApiError? CheckSubjects(StreamConfig config)
    {
        var subjects = config.Subjects!;
        if (config.Mirror is not null)
        {
            return MirrorWithSubjects;
        }

        var seen = new HashSet<string>(StringComparer.Ordinal);
        foreach (var subject in subjects)
        {
            if (!seen.Add(subject))
            {
                return ApiError.StreamInvalidConfig("duplicate subjects detected");
            }

            if (SubjectRules.IsSubsetOf(subject, "$JS.API.>"))
            {
                return ApiError.StreamInvalidConfig("subjects overlap with jetstream api");
            }

            if (!SubjectRules.IsValidSubject(subject))
            {
                return ApiError.StreamInvalidConfig("invalid subject");
            }
        }

        foreach (var a in subjects)
        {
            foreach (var b in subjects)
            {
                if (!ReferenceEquals(a, b) && a != b && SubjectRules.Collide(a, b))
                {
                    return ApiError.StreamInvalidConfig($"subject \"{a}\" overlaps with \"{b}\"");
                }
            }
        }

        return null;
    }

    /// <summary>
    /// nats-server's mirror and sources checks: a mirror has no subjects and no sources; an origin that
    /// exists must not allow larger messages than this stream, and a filter must overlap its subjects
    /// (for sources, any subject of the sources seen so far, as nats-server gathers them); no stream
    /// may reach itself through sources and mirrors. An origin that does not exist yet is allowed.
    /// </summary>
    private static ApiError? CheckOrigins(StreamConfig config, Func<string, StreamConfig?> streams)
    {
        if (config.Mirror is { } mirror)
        {
            if (config.Subjects is { Count: > 0 })
            {
                return MirrorWithSubjects;
            }

            if (config.Sources is { Count: > 0 })
            {
                return new ApiError(400, 10031, "stream mirrors can not also contain other sources");
            }

            if (config.AllowMsgCounter)
            {
                return MessageCounter.MirrorWithCounters;
            }

            if (CheckMirrorTransforms(mirror) is { } badTransform)
            {
                return badTransform;
            }

            if (streams(mirror.Name) is { } origin)
            {
                if (config.MaxMsgSize > 0 && origin.MaxMsgSize > 0 && config.MaxMsgSize < origin.MaxMsgSize)
                {
                    return new ApiError(400, 10030, "stream mirror must have max message size >= source");
                }

                if (!FilterOverlaps(mirror.FilterSubject, origin.Subjects))
                {
                    return ApiError.StreamInvalidConfig($"mirror '{mirror.Name}' filter subject '{mirror.FilterSubject}' does not overlap with any origin stream subject");
                }

                // nats-server's mirror inherits direct gets from its origin (2.10: only from one of this account's own).
                if (mirror.External is null)
                {
                    config.MirrorDirect = origin.AllowDirect;
                }
            }
        }

        var seen = new List<string>();
        foreach (var source in config.Sources ?? [])
        {
            if (CheckSourceTransforms(source) is { } badTransform)
            {
                return badTransform;
            }

            if (streams(source.Name) is not { } origin)
            {
                continue;
            }

            seen.AddRange(origin.Subjects ?? []);
            if (config.MaxMsgSize > 0 && origin.MaxMsgSize > 0 && config.MaxMsgSize < origin.MaxMsgSize)
            {
                return new ApiError(400, 10046, "stream source must have max message size >= target");
            }

            if (!FilterOverlaps(source.FilterSubject, seen))
            {
                return ApiError.StreamInvalidConfig($"source '{source.Name}' filter subject '{source.FilterSubject}' does not overlap with any origin stream subject");
            }
        }

        if (CheckExternal(config, streams) is { } badExternal)
        {
            return badExternal;
        }

        // Cycles, through sources and through mirrors, breadth first as nats-server walks them
        // (an external origin is another account's or domain's stream: not followed).
        var toVisit = new Queue<StreamConfig>([config]);
        var visited = new HashSet<string>(StringComparer.Ordinal);
        while (toVisit.TryDequeue(out var next))
        {
            visited.Add(next.Name);
            foreach (var origin in (next.Sources ?? []).Where(s => s.External is null).Select(s => s.Name).Concat(next.Mirror is { External: null } m ? [m.Name] : []))
            {
                if (visited.Contains(origin))
                {
                    return ApiError.StreamInvalidConfig("detected cycle");
                }

                if (streams(origin) is { } found)
                {
                    toVisit.Enqueue(found);
                }
            }
        }

        return null;
    }

    // 2.10 (checkStreamCfg): a mirror's transforms replace its filter; each src is a valid subject, none overlaps another.
    private static ApiError? CheckMirrorTransforms(StreamSource mirror)
    {
        if (mirror.SubjectTransforms is not { Count: > 0 } transforms)
        {
            return null;
        }

        if (!string.IsNullOrEmpty(mirror.FilterSubject))
        {
            return new ApiError(400, 10150, "mirror with multiple subject transforms cannot also have a single subject filter");
        }

        foreach (var transform in transforms)
        {
            if (!SubjectRules.IsValidSubject(transform.Source ?? ""))
            {
                return new ApiError(400, 10151, "mirror subject filter is invalid");
            }

            if (transforms.Any(other => !ReferenceEquals(other, transform) && SubjectRules.Collide(transform.Source!, other.Source ?? "")))
            {
                return new ApiError(400, 10152, "mirror subject filters can not overlap");
            }
        }

        return CheckTransformMappings(transforms, "mirror");
    }

    // 2.10 (checkStreamCfg): the same for a source, whose destinations are checked first and whose filters may not contain one another.
    private static ApiError? CheckSourceTransforms(StreamSource source)
    {
        if (source.SubjectTransforms is not { Count: > 0 } transforms || source.External is not null)
        {
            return null;
        }

        if (!string.IsNullOrEmpty(source.FilterSubject))
        {
            return new ApiError(400, 10144, "source with multiple subject transforms cannot also have a single subject filter");
        }

        if (transforms.Any(t => !IsMappingDestination(t.Destination)))
        {
            return new ApiError(400, 10146, "source transform destination is invalid");
        }

        foreach (var transform in transforms)
        {
            if (!SubjectRules.IsValidSubject(transform.Source ?? ""))
            {
                return new ApiError(400, 10145, "source subject filter is invalid");
            }

            if (transforms.Any(other => !ReferenceEquals(other, transform) && other.Source is { } o && SubjectRules.IsValidSubject(o) && SubjectRules.IsSubsetOf(transform.Source!, o)))
            {
                return new ApiError(400, 10147, "source filters can not overlap");
            }
        }

        return CheckTransformMappings(transforms, "source");
    }

    /// <summary>A mirror's or source's transform (src "" is ">"), or null when it cannot be built.</summary>
    internal static SubjectTransform? TransformOf(SubjectTransformConfig transform) =>
        SubjectTransform.TryCreate(string.IsNullOrEmpty(transform.Source) ? ">" : transform.Source, transform.Destination);

    // nats-server's ValidateMappingDestination: no empty token, nothing after '>', no white space.
    private static bool IsMappingDestination(string destination)
    {
        if (destination.Length == 0)
        {
            return true;
        }

        var tokens = destination.Split('.');
        for (var i = 0; i < tokens.Length; i++)
        {
            if (tokens[i].Length == 0 || (i > 0 && tokens[i - 1] == ">") || tokens[i].AsSpan().IndexOfAny(" \t\r\n\f") >= 0)
            {
                return false;
            }
        }

        return true;
    }

    // nats-server builds each transform when it starts the stream, and a create fails (500/10049) on one it cannot build.
    private static ApiError? CheckTransformMappings(List<SubjectTransformConfig> transforms, string what)
    {
        foreach (var transform in transforms)
        {
            if (transform.Destination.Length > 0 && TransformOf(transform) is null)
            {
                return new ApiError(500, 10049, $"subject transform from '{transform.Source}' to '{transform.Destination}' for the {what}: invalid mapping destination");
            }
        }

        return null;
    }

    // nats-server: a delivery prefix is a subject without wildcards that cannot receive the origins' subjects
    // (of the origins it can see); an API prefix is one too, and may not overlap $JS.API.
    private static ApiError? CheckExternal(StreamConfig config, Func<string, StreamConfig?> streams)
    {
        var origins = (config.Sources ?? []).Append(config.Mirror).OfType<StreamSource>().ToList();
        var externals = origins.Select(s => s.External).OfType<ExternalStream>().ToList();
        if (externals.Count == 0)
        {
            return null;
        }

        var subjects = origins.SelectMany(o => streams(o.Name)?.Subjects ?? []).ToList();
        foreach (var external in externals.Where(e => e.DeliverPrefix.Length > 0))
        {
            var prefix = external.DeliverPrefix;
            if (!SubjectRules.IsValidLiteralSubject(System.Text.Encoding.UTF8.GetBytes(prefix)))
            {
                return new ApiError(400, 10024, $"stream external delivery prefix {prefix} must not contain wildcards");
            }

            if (subjects.FirstOrDefault(s => SubjectRules.Collide(s, prefix + "." + s)) is { } overlapped)
            {
                return new ApiError(400, 10022, $"stream external delivery prefix {prefix} overlaps with stream subject {overlapped}");
            }
        }

        foreach (var external in externals.Where(e => e.ApiPrefix.Length > 0))
        {
            var prefix = external.ApiPrefix;
            if (!SubjectRules.IsValidLiteralSubject(System.Text.Encoding.UTF8.GetBytes(prefix)))
            {
                return ApiError.StreamInvalidConfig($"stream external api prefix \"{prefix}\" must be a valid subject without wildcards");
            }

            if (SubjectRules.Collide(prefix, "$JS.API"))
            {
                return new ApiError(400, 10021, $"stream external api prefix {prefix} must not overlap with $JS.API");
            }
        }

        return null;
    }

    private static ApiError MirrorWithSubjects => new(400, 10034, "stream mirrors can not contain subjects");

    private static bool FilterOverlaps(string? filter, IReadOnlyCollection<string>? subjects) =>
        string.IsNullOrEmpty(filter) || subjects is not { Count: > 0 } || subjects.Any(s => SubjectRules.Collide(s, filter));

    // republish: src (">" when empty) must overlap the stream's subjects, dest must not (a cycle), and the mapping must be valid.
    private static ApiError? CheckRePublish(StreamConfig config)
    {
        if (config.RePublish is not { } republish)
        {
            return null;
        }

        if (string.IsNullOrEmpty(republish.Source))
        {
            republish.Source = ">";
        }

        var subjects = config.Subjects ?? [];
        if (!subjects.Any(s => SubjectRules.Collide(republish.Source, s)))
        {
            return ApiError.StreamInvalidConfig("stream configuration for republish source is not valid subset of subjects");
        }

        if (subjects.Any(s => SubjectRules.IsValidSubject(republish.Destination) && SubjectRules.Collide(republish.Destination, s)))
        {
            return ApiError.StreamInvalidConfig("stream configuration for republish destination forms a cycle");
        }

        return SubjectTransform.TryCreate(republish.Source, republish.Destination) is null
            ? ApiError.StreamInvalidConfig("stream configuration for republish not valid")
            : null;
    }
}
