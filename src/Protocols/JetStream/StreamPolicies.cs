using System.Text.Json.Serialization;

namespace Courier.Protocols.JetStream;

/// <summary>Where a stream keeps its messages (nats-server's <c>storage</c>: "file" or "memory").</summary>
[JsonConverter(typeof(StorageTypeConverter))]
public enum StorageType
{
    /// <summary>Block files on disk (<c>FileStore</c>).</summary>
    File = 0,

    /// <summary>Process memory only; gone on restart (<c>MemoryStore</c>).</summary>
    Memory = 1,

    /// <summary>A wire name nats-server does not know: the stream rules refuse it ("invalid storage type").</summary>
    Unknown = -1,
}

/// <summary>What a full stream does with a new message (nats-server's <c>discard</c>: "old" or "new").</summary>
[JsonConverter(typeof(DiscardPolicyConverter))]
public enum DiscardPolicy
{
    /// <summary>Store the new message and remove the oldest until the stream is within its limits.</summary>
    Old = 0,

    /// <summary>Refuse the new message.</summary>
    New = 1,

    /// <summary>A wire name nats-server does not know: the stream rules refuse it ("invalid retention or discard policy").</summary>
    Unknown = -1,
}

/// <summary>When a stream lets go of a message (nats-server's <c>retention</c>: "limits", "interest" or "workqueue").</summary>
[JsonConverter(typeof(RetentionPolicyConverter))]
public enum RetentionPolicy
{
    /// <summary>Kept until a limit (max_msgs, max_bytes, max_age, ...) removes it.</summary>
    Limits = 0,

    /// <summary>Kept while a consumer has yet to acknowledge it.</summary>
    Interest = 1,

    /// <summary>Removed once one consumer acknowledges it.</summary>
    WorkQueue = 2,

    /// <summary>A wire name nats-server does not know: the stream rules refuse it ("invalid retention or discard policy").</summary>
    Unknown = -1,
}

/// <summary>The wire names of <see cref="StorageType"/>.</summary>
public sealed class StorageTypeConverter() : WireEnumConverter<StorageType>(
    StorageType.Unknown, ("file", StorageType.File), ("memory", StorageType.Memory));

/// <summary>The wire names of <see cref="DiscardPolicy"/>.</summary>
public sealed class DiscardPolicyConverter() : WireEnumConverter<DiscardPolicy>(
    DiscardPolicy.Unknown, ("old", DiscardPolicy.Old), ("new", DiscardPolicy.New));

/// <summary>The wire names of <see cref="RetentionPolicy"/>.</summary>
public sealed class RetentionPolicyConverter() : WireEnumConverter<RetentionPolicy>(
    RetentionPolicy.Unknown, ("limits", RetentionPolicy.Limits), ("interest", RetentionPolicy.Interest), ("workqueue", RetentionPolicy.WorkQueue));
