# Files of src/kernels/cpu/detection: box arithmetic (IoU, matching, encoding, cropping).
# Boxes and coordinates.
list(APPEND STOKER_SOURCES
  src/kernels/cpu/detection/boxes.cc
)
list(APPEND STOKER_TEST_SOURCES
  tests/cpp/kernels/detection_boxes_test.cc
)
# Random crops that keep boxes.
list(APPEND STOKER_SOURCES
  src/kernels/cpu/detection/crop_boxes.cc
)
list(APPEND STOKER_TEST_SOURCES
  tests/cpp/kernels/detection_crop_test.cc
)
# Affine transforms: transforms.*, coord_transform.
list(APPEND STOKER_SOURCES
  src/kernels/cpu/detection/affine.cc
)
list(APPEND STOKER_TEST_SOURCES
  tests/cpp/kernels/detection_affine_test.cc
)
# The other random crops and bbox_rotate.
list(APPEND STOKER_SOURCES
  src/kernels/cpu/detection/crops_rotate.cc
)
# Segmentation: connected components, mask pixels, polygon selection.
list(APPEND STOKER_SOURCES
  src/kernels/cpu/detection/segmentation.cc
)
list(APPEND STOKER_TEST_SOURCES
  tests/cpp/kernels/detection_segmentation_test.cc
)
