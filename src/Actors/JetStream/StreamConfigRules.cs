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

        if (config.Storage is not ("file" or "memory"))
        {
            return ApiError.StreamInvalidConfig("invalid storage type");
        }

        if (config.Retention is not ("limits" or "interest" or "workqueue") || config.Discard is not ("old" or "new"))
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

        if (config.DiscardNewPerSubject)
        {
            if (config.Discard != "new")
            {
                return ApiError.StreamInvalidConfig("discard new per subject requires discard new policy to be set");
            }

            if (config.MaxMsgsPerSubject <= 0)
            {
                return ApiError.StreamInvalidConfig("discard new per subject requires max msgs per subject > 0");
            }
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

                // nats-server's mirror inherits direct gets from its origin.
                config.MirrorDirect = origin.AllowDirect;
            }
        }

        var seen = new List<string>();
        foreach (var source in config.Sources ?? [])
        {
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

        // Cycles, through sources and through mirrors, breadth first as nats-server walks them.
        var toVisit = new Queue<StreamConfig>([config]);
        var visited = new HashSet<string>(StringComparer.Ordinal);
        while (toVisit.TryDequeue(out var next))
        {
            visited.Add(next.Name);
            foreach (var origin in (next.Sources ?? []).Select(s => s.Name).Concat(next.Mirror is { } m ? [m.Name] : []))
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
