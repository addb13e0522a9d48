using System.Buffers;
using System.Buffers.Binary;
using System.Runtime.Serialization;
using Courier.Actors.Persistence;
using Xunit;

namespace Courier.Actors.Tests.Persistence;

public sealed class PersistenceSerializationTests : PersistenceTestKit
{
    private PersistenceSerialization Serialization => Persistence.Serialization;

    [Fact]
    public void A_registered_codec_round_trips_its_type_under_its_manifest()
    {
        Serialization.Register("delta", new DeltaCodec());
        var buffer = new ArrayBufferWriter<byte>();
        var manifest = Serialization.Serialize(new Delta(7, 42), buffer);
        Assert.Equal("delta", manifest);
        Assert.Equal(12, buffer.WrittenCount); // the codec's own 12 bytes, nothing around them
        Assert.Equal(new Delta(7, 42), Serialization.Deserialize(manifest, buffer.WrittenMemory));
    }

    [Fact]
    public void Strings_and_byte_arrays_are_built_in()
    {
        var buffer = new ArrayBufferWriter<byte>();
        Assert.Equal("héllo", Serialization.Deserialize(Serialization.Serialize("héllo", buffer), buffer.WrittenMemory));
        buffer.ResetWrittenCount();
        Assert.Equal(new byte[] { 1, 2, 3 }, Serialization.Deserialize(Serialization.Serialize(new byte[] { 1, 2, 3 }, buffer), buffer.WrittenMemory));
    }

    [Fact]
    public void A_type_without_a_codec_or_an_unknown_manifest_is_a_serialization_error()
    {
        Assert.False(Serialization.CanSerialize(new Delta(1, 1)));
        Assert.Throws<SerializationException>(() => Serialization.Serialize(new Delta(1, 1), new ArrayBufferWriter<byte>()));
        Assert.Throws<SerializationException>(() => Serialization.Deserialize("nope", ReadOnlyMemory<byte>.Empty));
    }

    [Fact]
    public void Registering_again_is_idempotent_but_a_conflicting_binding_is_refused()
    {
        Serialization.Register("delta", new DeltaCodec());
        Serialization.Register("delta", new DeltaCodec()); // an actor's constructor after a restart
        Assert.Throws<InvalidOperationException>(() => Serialization.Register("delta2", new DeltaCodec()));
        Assert.Throws<InvalidOperationException>(() => Serialization.Register("delta", (string s, IBufferWriter<byte> o) => { }, b => ""));
        Assert.True(Serialization.CanSerialize(new Delta(1, 1)));
    }

    [Fact]
    public void A_codec_for_a_base_type_serves_its_subtypes()
    {
        Serialization.Register<Shape>("shape", (s, o) => o.Write([s.Sides]), b => b.Span[0] == 3 ? new Triangle() : new Shape(b.Span[0]));
        var buffer = new ArrayBufferWriter<byte>();
        Assert.Equal("shape", Serialization.Serialize(new Triangle(), buffer));
        Assert.IsType<Triangle>(Serialization.Deserialize("shape", buffer.WrittenMemory));
    }

    private sealed record Delta(int Consumer, long Floor);

    private record Shape(byte Sides);

    private sealed record Triangle() : Shape(3);

    private sealed class DeltaCodec : IPersistenceCodec<Delta>
    {
        public void Write(Delta value, IBufferWriter<byte> output)
        {
            var span = output.GetSpan(12);
            BinaryPrimitives.WriteInt32LittleEndian(span, value.Consumer);
            BinaryPrimitives.WriteInt64LittleEndian(span[4..], value.Floor);
            output.Advance(12);
        }

        public Delta Read(ReadOnlyMemory<byte> bytes) =>
            new(BinaryPrimitives.ReadInt32LittleEndian(bytes.Span), BinaryPrimitives.ReadInt64LittleEndian(bytes.Span[4..]));
    }
}
