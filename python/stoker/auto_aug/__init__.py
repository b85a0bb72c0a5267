"""Automatic augmentations, as DALI's ``nvidia.dali.auto_aug``: AutoAugment
(``auto_augment``), RandAugment (``rand_augment``), TrivialAugment Wide
(``trivial_augment``), their augmentations (``augmentations``) and the pieces to build others
(``core``: the ``@augmentation`` decorator, ``Policy``, ``select``, ``signed_bin``).

    from stoker import pipeline_def, fn, types
    from stoker.auto_aug import rand_augment

    @pipeline_def(enable_conditionals=True)
    def pipe():
        jpegs, labels = fn.readers.file(file_root=root)
        images = fn.decoders.image(jpegs)
        images = rand_augment.rand_augment(images, n=2, m=9)
        return images, labels

Each sample gets its own augmentations and magnitudes, applied with per-sample conditionals,
so the pipeline needs ``enable_conditionals=True``. Not imported by ``import stoker``.
"""
from . import core
from . import augmentations
from . import auto_augment
from . import rand_augment
from . import trivial_augment

__all__ = ["core", "augmentations", "auto_augment", "rand_augment", "trivial_augment"]
