using System.Globalization;
using Akka.Actor;
using Akka.Serialization;

namespace Courier.Actors.Persistence;

/// <summary>
/// How the plugins turn events and snapshots into bytes and back: Akka's serialization (the binary
/// serializer bound in reference.conf), with the serializer id and its manifest stored in the engine's
/// manifest field as <c>&lt;id&gt;:&lt;manifest&gt;</c>, so replay finds the same serializer.
/// </summary>
internal static class PayloadSerialization
{
    /// <summary>Serializes <paramref name="value"/>; the returned manifest names its serializer.</summary>
    /// <exception cref="NotSupportedException">No serializer is bound to the type but Akka's JSON fallback:
    /// the event or snapshot is rejected rather than stored as JSON.</exception>
    public static (byte[] Bytes, string Manifest) Serialize(ActorSystem system, object value)
    {
        var serializer = system.Serialization.FindSerializerFor(value);
        if (serializer is NewtonSoftJsonSerializer)
        {
            throw new NotSupportedException($"{value.GetType()} has no binary serializer bound (akka.actor.serialization-bindings); Courier persists nothing as JSON");
        }

        var manifest = Serialization.ManifestFor(serializer, value);
        return (serializer.ToBinary(value), serializer.Identifier.ToString(CultureInfo.InvariantCulture) + ":" + manifest);
    }

    /// <summary>Deserializes what <see cref="Serialize"/> produced.</summary>
    /// <exception cref="System.Runtime.Serialization.SerializationException">The manifest names no serializer.</exception>
    public static object Deserialize(ActorSystem system, byte[] bytes, string manifest)
    {
        var colon = manifest.IndexOf(':', StringComparison.Ordinal);
        if (colon <= 0 || !int.TryParse(manifest.AsSpan(0, colon), NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var id))
        {
            throw new System.Runtime.Serialization.SerializationException($"stored manifest '{manifest}' names no serializer");
        }

        return system.Serialization.Deserialize(bytes, id, manifest[(colon + 1)..]);
    }
}
