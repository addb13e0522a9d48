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

    /// <summary>Fills nats-server's defaults into <paramref name="config"/> and checks it (checkStreamCfg); null when it is valid.</summary>
    public static ApiError? ApplyDefaultsAndCheck(StreamConfig config)
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

        return CheckRePublish(config);
    }

    private static ApiError? CheckSubjects(StreamConfig config)
    {
        var subjects = config.Subjects!;
        if (config.Mirror is not null)
        {
            return new ApiError(400, 10034, "stream mirrors can not contain subjects");
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
