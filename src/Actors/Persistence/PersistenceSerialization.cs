using System.Buffers;
using System.Collections.Concurrent;
using System.Runtime.Serialization;
using System.Text;

namespace Courier.Actors.Persistence;

/// <summary>
/// The codecs the journal and snapshot store use, one per type, each under a manifest stored with every
/// event (Akka.NET's serialization bindings reduced to persistence). A type without a codec is not
/// serializable: its events are rejected (<see cref="WriteMessageRejected"/>) and its snapshots fail to save.
/// <c>string</c> ("s") and <c>byte[]</c> ("b") are built in.
/// </summary>
/// <remarks>Register before the first persistent actor starts; lookups may come from any thread (the journal,
/// replays on the thread pool, the snapshot store).</remarks>
public sealed class PersistenceSerialization
{
    private readonly ConcurrentDictionary<string, Binding> _byManifest = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<Type, Binding?> _byType = new();
    private readonly List<Binding> _bindings = []; // registration order, for subtype lookups
    private readonly Lock _lock = new();

    internal PersistenceSerialization()
    {
        Register("s", new StringCodec());
        Register("b", new BytesCodec());
    }

    /// <summary>Binds <typeparamref name="T"/> (and its subtypes without a codec of their own) to
    /// <paramref name="codec"/> under <paramref name="manifest"/>. Registering the same type under the same
    /// manifest again replaces the codec (so an actor may register in its constructor, which runs again on
    /// every restart).</summary>
    /// <exception cref="InvalidOperationException">The manifest is bound to another type, or the type to another manifest.</exception>
    public PersistenceSerialization Register<T>(string manifest, IPersistenceCodec<T> codec)
    {
        ArgumentException.ThrowIfNullOrEmpty(manifest);
        ArgumentNullException.ThrowIfNull(codec);
        var binding = new Binding(typeof(T), manifest, (value, output) => codec.Write((T)value, output), bytes => codec.Read(bytes)!);
        lock (_lock)
        {
            var existing = _bindings.FindIndex(b => b.Type == typeof(T) || b.Manifest == manifest);
            if (existing >= 0)
            {
                if (_bindings[existing].Type != typeof(T) || _bindings[existing].Manifest != manifest)
                {
                    throw new InvalidOperationException(
                        $"Manifest [{manifest}] or type {typeof(T)} is already bound ([{_bindings[existing].Manifest}] = {_bindings[existing].Type}).");
                }

                _bindings.RemoveAt(existing);
            }

            _bindings.Add(binding);
            _byManifest[manifest] = binding;
            _byType.Clear(); // subtype resolutions may change
        }

        return this;
    }

    /// <summary>As <see cref="Register{T}(string, IPersistenceCodec{T})"/> with two functions.</summary>
    public PersistenceSerialization Register<T>(string manifest, Action<T, IBufferWriter<byte>> write, Func<ReadOnlyMemory<byte>, T> read)
    {
        ArgumentNullException.ThrowIfNull(write);
        ArgumentNullException.ThrowIfNull(read);
        return Register(manifest, new DelegateCodec<T>(write, read));
    }

    /// <summary>True when <paramref name="value"/>'s type has a codec.</summary>
    public bool CanSerialize(object value) => Resolve(value.GetType()) is not null;

    /// <summary>Writes <paramref name="value"/> to <paramref name="output"/> and returns its manifest.</summary>
    /// <exception cref="SerializationException">No codec for its type.</exception>
    public string Serialize(object value, IBufferWriter<byte> output)
    {
        ArgumentNullException.ThrowIfNull(value);
        var binding = Resolve(value.GetType())
            ?? throw new SerializationException($"No persistence codec is registered for {value.GetType()}.");
        binding.Write(value, output);
        return binding.Manifest;
    }

    /// <summary>Reads the value <paramref name="manifest"/> names.</summary>
    /// <exception cref="SerializationException">No codec for the manifest.</exception>
    public object Deserialize(string manifest, ReadOnlyMemory<byte> bytes)
    {
        if (!_byManifest.TryGetValue(manifest, out var binding))
        {
            throw new SerializationException($"No persistence codec is registered for manifest [{manifest}].");
        }

        return binding.Read(bytes);
    }

    private Binding? Resolve(Type type) =>
        _byType.GetOrAdd(type, static (t, self) =>
        {
            lock (self._lock)
            {
                return self._bindings.FirstOrDefault(b => b.Type == t) ?? self._bindings.FirstOrDefault(b => b.Type.IsAssignableFrom(t));
            }
        }, this);

    private sealed record Binding(Type Type, string Manifest, Action<object, IBufferWriter<byte>> Write, Func<ReadOnlyMemory<byte>, object> Read);

    private sealed class DelegateCodec<T>(Action<T, IBufferWriter<byte>> write, Func<ReadOnlyMemory<byte>, T> read) : IPersistenceCodec<T>
    {
        public void Write(T value, IBufferWriter<byte> output) => write(value, output);

        public T Read(ReadOnlyMemory<byte> bytes) => read(bytes);
    }

    private sealed class StringCodec : IPersistenceCodec<string>
    {
        public void Write(string value, IBufferWriter<byte> output) => Encoding.UTF8.GetBytes(value, output);

        public string Read(ReadOnlyMemory<byte> bytes) => Encoding.UTF8.GetString(bytes.Span);
    }

    private sealed class BytesCodec : IPersistenceCodec<byte[]>
    {
        public void Write(byte[] value, IBufferWriter<byte> output) => output.Write(value);

        public byte[] Read(ReadOnlyMemory<byte> bytes) => bytes.ToArray();
    }
}
