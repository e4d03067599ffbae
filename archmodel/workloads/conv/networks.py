"""The convolution layers of four real networks, with their padding, at batch 1.

Shapes are the published ones (input before padding); pooling and fully connected layers are
left out because they are not convolutions to lower.

- **ResNet-50** (He et al., CVPR 2016; the Caffe release SCALE-Sim's ``Resnet50.csv`` also
  follows): 7x7/2 pad 3 stem on 224x224x3, then bottlenecks of 1x1, 3x3 pad 1, 1x1, the
  stride-2 of stages 3-5 on the first 1x1 and on the projection shortcut.
- **VGG-16** (Simonyan and Zisserman, ICLR 2015): thirteen 3x3 pad 1 convolutions.
- **Inception-v3** (Szegedy et al., CVPR 2016; the layer shapes of torchvision's
  ``inception_v3``): 299x299x3 input, the factorised 1x7/7x1 and 1x3/3x1 layers with their
  (0, 3)/(3, 0) and (0, 1)/(1, 0) padding.
- **AlexNet** (Krizhevsky et al., NIPS 2012, as in Caffe's ``bvlc_alexnet``: 227x227 input,
  96-256-384-384-256 filters); the two-GPU grouping of conv2, conv4 and conv5 is not modelled
  (each layer sees all its input channels).
"""

from __future__ import annotations

import difflib

from archmodel.kernel import ArchError

from .layers import Layer


def _conv(name, hw, c, k, f, stride=1, pad=None) -> Layer:
    kh, kw = (k, k) if isinstance(k, int) else k
    ph, pw = ((kh - 1) // 2, (kw - 1) // 2) if pad is None else ((pad, pad) if isinstance(pad, int) else pad)
    return Layer(name, hw, hw, c, kh, kw, f, stride, ph, pw)


def resnet50() -> list[Layer]:
    """ResNet-50's 53 convolutions (stem, 16 bottlenecks, 4 projection shortcuts)."""
    layers = [_conv("conv1", 224, 3, 7, 64, stride=2)]
    size, channels = 56, 64
    for stage, (width, blocks) in enumerate([(64, 3), (128, 4), (256, 6), (512, 3)], start=2):
        for block in range(blocks):
            stride = 2 if block == 0 and stage > 2 else 1
            name = f"res{stage}{chr(ord('a') + block)}"
            out = size // stride
            layers.append(_conv(f"{name}_1", size, channels, 1, width, stride))
            layers.append(_conv(f"{name}_2", out, width, 3, width))
            layers.append(_conv(f"{name}_3", out, width, 1, 4 * width))
            if block == 0:
                layers.append(_conv(f"{name}_proj", size, channels, 1, 4 * width, stride))
            size, channels = out, 4 * width
    return layers


def vgg16() -> list[Layer]:
    """VGG-16's 13 convolutions (configuration D)."""
    layers, channels, size = [], 3, 224
    for block, (filters, count) in enumerate([(64, 2), (128, 2), (256, 3), (512, 3), (512, 3)], start=1):
        for i in range(1, count + 1):
            layers.append(_conv(f"conv{block}_{i}", size, channels, 3, filters))
            channels = filters
        size //= 2
    return layers


def alexnet() -> list[Layer]:
    """AlexNet's five convolutions."""
    return [_conv("conv1", 227, 3, 11, 96, stride=4, pad=0), _conv("conv2", 27, 96, 5, 256),
            _conv("conv3", 13, 256, 3, 384), _conv("conv4", 13, 384, 3, 384), _conv("conv5", 13, 384, 3, 256)]


def _inception_a(name, c, pool) -> list[Layer]:
    return [_conv(f"{name}.1x1", 35, c, 1, 64), _conv(f"{name}.5x5_1", 35, c, 1, 48),
            _conv(f"{name}.5x5_2", 35, 48, 5, 64), _conv(f"{name}.3x3dbl_1", 35, c, 1, 64),
            _conv(f"{name}.3x3dbl_2", 35, 64, 3, 96), _conv(f"{name}.3x3dbl_3", 35, 96, 3, 96),
            _conv(f"{name}.pool", 35, c, 1, pool)]


def _inception_c(name, c7) -> list[Layer]:
    return [_conv(f"{name}.1x1", 17, 768, 1, 192), _conv(f"{name}.7x7_1", 17, 768, 1, c7),
            _conv(f"{name}.7x7_2", 17, c7, (1, 7), c7), _conv(f"{name}.7x7_3", 17, c7, (7, 1), 192),
            _conv(f"{name}.7x7dbl_1", 17, 768, 1, c7), _conv(f"{name}.7x7dbl_2", 17, c7, (7, 1), c7),
            _conv(f"{name}.7x7dbl_3", 17, c7, (1, 7), c7), _conv(f"{name}.7x7dbl_4", 17, c7, (7, 1), c7),
            _conv(f"{name}.7x7dbl_5", 17, c7, (1, 7), 192), _conv(f"{name}.pool", 17, 768, 1, 192)]


def _inception_e(name, c) -> list[Layer]:
    return [_conv(f"{name}.1x1", 8, c, 1, 320), _conv(f"{name}.3x3_1", 8, c, 1, 384),
            _conv(f"{name}.3x3_2a", 8, 384, (1, 3), 384), _conv(f"{name}.3x3_2b", 8, 384, (3, 1), 384),
            _conv(f"{name}.3x3dbl_1", 8, c, 1, 448), _conv(f"{name}.3x3dbl_2", 8, 448, 3, 384),
            _conv(f"{name}.3x3dbl_3a", 8, 384, (1, 3), 384), _conv(f"{name}.3x3dbl_3b", 8, 384, (3, 1), 384),
            _conv(f"{name}.pool", 8, c, 1, 192)]


def inception_v3() -> list[Layer]:
    """Inception-v3's 94 convolutions (stem, Mixed_5b-5d, 6a-6e, 7a-7c; no auxiliary head)."""
    layers = [_conv("Conv2d_1a_3x3", 299, 3, 3, 32, stride=2, pad=0), _conv("Conv2d_2a_3x3", 149, 32, 3, 32, pad=0),
              _conv("Conv2d_2b_3x3", 147, 32, 3, 64), _conv("Conv2d_3b_1x1", 73, 64, 1, 80),
              _conv("Conv2d_4a_3x3", 73, 80, 3, 192, pad=0)]
    layers += _inception_a("Mixed_5b", 192, 32) + _inception_a("Mixed_5c", 256, 64) + _inception_a("Mixed_5d", 288, 64)
    layers += [_conv("Mixed_6a.3x3", 35, 288, 3, 384, stride=2, pad=0), _conv("Mixed_6a.3x3dbl_1", 35, 288, 1, 64),
               _conv("Mixed_6a.3x3dbl_2", 35, 64, 3, 96), _conv("Mixed_6a.3x3dbl_3", 35, 96, 3, 96, stride=2, pad=0)]
    for name, c7 in [("Mixed_6b", 128), ("Mixed_6c", 160), ("Mixed_6d", 160), ("Mixed_6e", 192)]:
        layers += _inception_c(name, c7)
    layers += [_conv("Mixed_7a.3x3_1", 17, 768, 1, 192), _conv("Mixed_7a.3x3_2", 17, 192, 3, 320, stride=2, pad=0),
               _conv("Mixed_7a.7x7x3_1", 17, 768, 1, 192), _conv("Mixed_7a.7x7x3_2", 17, 192, (1, 7), 192),
               _conv("Mixed_7a.7x7x3_3", 17, 192, (7, 1), 192),
               _conv("Mixed_7a.7x7x3_4", 17, 192, 3, 192, stride=2, pad=0)]
    layers += _inception_e("Mixed_7b", 1280) + _inception_e("Mixed_7c", 2048)
    return layers


NETWORKS = {"resnet50": resnet50, "vgg16": vgg16, "inception_v3": inception_v3, "alexnet": alexnet}
"""The bundled networks by name; each function returns the network's convolution layers."""


def network(name: str, batch: int = 1) -> list[Layer]:
    """The convolution layers of a bundled network (see :data:`NETWORKS`) at ``batch``."""
    build = NETWORKS.get(name)
    if build is None:
        close = difflib.get_close_matches(name, list(NETWORKS), n=1)
        raise ArchError(f"unknown network '{name}'", hint=f"did you mean '{close[0]}'?" if close
                        else "bundled networks: " + ", ".join(NETWORKS))
    return [layer.scaled(batch=batch) for layer in build()]
