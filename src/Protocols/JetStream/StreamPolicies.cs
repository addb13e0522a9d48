using System.Text.Json;
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
public sealed class StorageTypeConverter : JsonConverter<StorageType>
{
    private static readonly WireNames Names = new(nameof(StorageType), (int)StorageType.Unknown, ("file", (int)StorageType.File), ("memory", (int)StorageType.Memory));

    public override bool HandleNull => true;

    public override StorageType Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options) => (StorageType)Names.Read(ref reader);

    public override void Write(Utf8JsonWriter writer, StorageType value, JsonSerializerOptions options) => Names.Write(writer, (int)value);
}

/// <summary>The wire names of <see cref="DiscardPolicy"/>.</summary>
public sealed class DiscardPolicyConverter : JsonConverter<DiscardPolicy>
{
    private static readonly WireNames Names = new(nameof(DiscardPolicy), (int)DiscardPolicy.Unknown, ("old", (int)DiscardPolicy.Old), ("new", (int)DiscardPolicy.New));

    public override bool HandleNull => true;

    public override DiscardPolicy Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options) => (DiscardPolicy)Names.Read(ref reader);

    public override void Write(Utf8JsonWriter writer, DiscardPolicy value, JsonSerializerOptions options) => Names.Write(writer, (int)value);
}

/// <summary>The wire names of <see cref="RetentionPolicy"/>.</summary>
public sealed class RetentionPolicyConverter : JsonConverter<RetentionPolicy>
{
    private static readonly WireNames Names = new(nameof(RetentionPolicy), (int)RetentionPolicy.Unknown, ("limits", (int)RetentionPolicy.Limits), ("interest", (int)RetentionPolicy.Interest), ("workqueue", (int)RetentionPolicy.WorkQueue));

    public override bool HandleNull => true;

    public override RetentionPolicy Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options) => (RetentionPolicy)Names.Read(ref reader);

    public override void Write(Utf8JsonWriter writer, RetentionPolicy value, JsonSerializerOptions options) => Names.Write(writer, (int)value);
}
